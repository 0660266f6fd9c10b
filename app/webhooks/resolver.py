"""Host name → addresses, as an explicit object handed to the webhook client.

The client resolves a host exactly once per request and connects to the address it checked,
so whoever resolves must be swappable: production uses the system resolver (cooperative under
gevent's monkey-patching), tests and air-gapped labs use a static map.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Iterable, Mapping, Protocol, Sequence

from app.webhooks.address_policy import IPAddress


class ResolutionFailed(Exception):
    """The host has no address (NXDOMAIN, no A/AAAA, resolver error)."""


class Resolver(Protocol):
    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address ``host`` currently maps to, in preference order; never empty."""


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    seen: dict[IPAddress, None] = {}
    for address in addresses:
        seen.setdefault(address, None)
    return list(seen)


class SystemResolver:
    """getaddrinfo: the OS resolver (hosts file, DNS), patched by gevent to not block the hub."""

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        except (socket.gaierror, UnicodeError, OSError) as exc:
            raise ResolutionFailed(f"{host}: {exc}") from exc
        addresses = _unique(ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos)
        if not addresses:
            raise ResolutionFailed(f"{host}: no address")
        return addresses


class StaticResolver:
    """A fixed host → addresses map (case-insensitive). Records each lookup in ``lookups``
    so a test can prove how many resolutions a request made."""

    def __init__(self, mapping: Mapping[str, str | Sequence[str]]) -> None:
        self._map: dict[str, list[IPAddress]] = {}
        for host, value in mapping.items():
            self.add(host, value)
        self.lookups: list[str] = []

    def add(self, host: str, addresses: str | Sequence[str]) -> None:
        values = [addresses] if isinstance(addresses, str) else list(addresses)
        self._map[host.lower().rstrip(".")] = [ipaddress.ip_address(v) for v in values]

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        key = host.lower().rstrip(".")
        self.lookups.append(key)
        try:
            return list(self._map[key])
        except KeyError:
            raise ResolutionFailed(f"{host}: not in the static map") from None
