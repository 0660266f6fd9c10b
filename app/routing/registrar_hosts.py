"""The addresses of registrars known only by host name, for the inbound ACL.

Why: a carrier we register to sends the calls for our registration from its registrar, and
FreeSWITCH's ACL admits addresses, not names. A registering gateway given as a host name is
therefore resolved whenever the ACL is built (every routing change, every catch-up) and again
every ``limits.REGISTRAR_RESOLVE_SECONDS`` (``RegistrarRefresher``), and the addresses it maps
to are admitted as ``/32`` nodes. They only admit: a call from them is tied to its carrier
through the registration (``sip_gateway_name``), never by address.

Each address is checked at use with the webhook address policy: a public unicast IPv4 address
only (the ACL is IPv4), loopback only in the development/test mode
(``SBC_ALLOW_LOOPBACK_WEBHOOKS=1``). A name that maps to a private, link-local or metadata
address, or does not resolve, admits nothing (a log line says why); a lookup that fails keeps
nothing from the last one, since an address the carrier gave up may now be someone else's.
"""
from __future__ import annotations

import ipaddress
import logging
from typing import Callable, Iterable, Mapping

import gevent

from app import limits
from app.routing.rows import GatewayRow
from app.settings import get_settings
from app.webhooks import address_policy
from app.webhooks.resolver import ResolutionFailed, Resolver, SystemResolver

log = logging.getLogger(__name__)

RegistrarAddresses = Mapping[str, tuple[str, ...]]  # host name -> admitted IPv4 addresses


def registrar_hosts(gateways: Iterable[GatewayRow]) -> list[str]:
    """Host names of the active registering gateways given by name, sorted, once each."""
    return sorted({gw.host for gw in gateways if gw.register and gw.is_active and gw.host})


def admitted_addresses(host: str, port: int, resolver: Resolver, allow_loopback: bool) -> tuple[str, ...]:
    """The IPv4 addresses ``host`` maps to now that the policy admits, sorted; () when it
    does not resolve. One refused address refuses the name (which address the carrier uses
    is not ours to choose), as for webhook URLs."""
    try:
        addresses = resolver.resolve(host, port)
    except ResolutionFailed as exc:
        log.warning("routing: registrar %s does not resolve (%s): it admits no address", host, exc)
        return ()
    for address in addresses:
        label = address_policy.refusal(address, allow_loopback=allow_loopback)
        if label is not None:
            log.warning("routing: registrar %s maps to a %s address: it admits no address", host, label)
            return ()
    return tuple(sorted({str(a) for a in addresses if isinstance(a, ipaddress.IPv4Address)},
                        key=lambda a: int(ipaddress.IPv4Address(a))))


def resolve_registrars(gateways: Iterable[GatewayRow], resolver: Resolver | None = None,
                       allow_loopback: bool | None = None) -> dict[str, tuple[str, ...]]:
    """Host name -> admitted addresses of every registering host-name gateway."""
    resolver = resolver or SystemResolver()
    loopback_ok = get_settings().allow_loopback_webhooks if allow_loopback is None else allow_loopback
    rows = list(gateways)
    ports = {gw.host: gw.port for gw in rows if gw.host}
    return {host: admitted_addresses(host, ports[host], resolver, loopback_ok) for host in registrar_hosts(rows)}


class RegistrarRefresher:
    """Resolves the registrars again every ``interval_seconds`` and, when an answer changed,
    runs ``sync()`` (the routing reloader: recompile, rewrite the ACL, ``reloadacl``).
    ``current()`` is what the applied ACL was built with, ``resolve()`` asks DNS now."""

    def __init__(self, current: Callable[[], RegistrarAddresses], resolve: Callable[[], RegistrarAddresses],
                 sync: Callable[[], object], interval_seconds: float = limits.REGISTRAR_RESOLVE_SECONDS) -> None:
        self.current = current
        self.resolve = resolve
        self.sync = sync
        self.interval_seconds = interval_seconds
        self._greenlet: gevent.Greenlet | None = None

    def refresh(self) -> bool:
        """One round: True when the addresses changed and the ACL was rebuilt."""
        if dict(self.resolve()) == dict(self.current()):
            return False
        log.info("routing: a registrar's addresses changed: rebuilding the ACL")
        self.sync()
        return True

    def _loop(self) -> None:
        while True:
            gevent.sleep(self.interval_seconds)
            try:
                self.refresh()
            except Exception:  # the next round tries again; the ACL keeps its last addresses
                log.exception("routing: refreshing the registrars' addresses failed")

    def start(self) -> "RegistrarRefresher":
        self._greenlet = gevent.spawn(self._loop)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(timeout=timeout)
