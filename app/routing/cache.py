"""The controller's compiled routing data, swapped whole on ``routing.config.changed``.

Readers (every call) take ``cache.table()`` once and use that immutable snapshot; a reload
compiles a new snapshot off to the side and replaces the reference, so a call never sees half
a reload and never waits on the database.
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import AbstractSet, Any, Callable, Iterable

import gevent.lock

from app.routing.acl import AclEntry, CarrierIdentifier, RejectedGateway, build_acl
from app.routing.fsconfig import EslApi, GatewayDiff, apply_to_freeswitch, outbound_gateways, write_generated
from app.routing.lcr import Explanation, LcrTable, compile_table, gateway_id_from_name, gateway_name
from app.routing.registrar_hosts import RegistrarAddresses, resolve_registrars
from app.routing.rows import CarrierRow, GatewayRow, RoutingRows
from app.webhooks.resolver import Resolver

log = logging.getLogger(__name__)

ROUTING_CHANGED = "routing.config.changed"


@dataclass(frozen=True)
class RoutingTable:
    lcr: LcrTable
    identifier: CarrierIdentifier
    acl_entries: tuple[AclEntry, ...]
    rejected_gateways: tuple[RejectedGateway, ...]
    outbound_gateways: tuple[GatewayRow, ...]
    compile_seconds: float
    carriers: dict[uuid.UUID, CarrierRow] = field(default_factory=dict)
    # host name -> addresses the ACL admits for a registrar known by name (registrar_hosts)
    registrars: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gateways: tuple[GatewayRow, ...] = ()

    def identify_carrier(self, source_ip: str | None,
                         account_id: uuid.UUID | None = None) -> tuple[uuid.UUID, uuid.UUID] | None:
        """With ``account_id`` (the dialled number's account) only platform carriers and that
        account's own carriers can match; without it any carrier."""
        if account_id is None:
            return self.identifier.identify(source_ip)
        return self.identifier.identify(source_ip, account_id)

    def explain(self, number: str, account_id: uuid.UUID | None,
                down_gateways: AbstractSet[uuid.UUID] = frozenset()) -> Explanation:
        return self.lcr.explain(number, account_id, down_gateways)

    def describe_gateway(self, gateway_id: uuid.UUID) -> tuple[uuid.UUID, str] | None:
        """(carrier id, "ip:port") of a sofia gateway, for system.gateway.up/down."""
        for gw in self.outbound_gateways:
            if gw.id == gateway_id:
                return gw.carrier_id, f"{gw.address}:{gw.port}"
        return None

    def registered_carrier(self, sofia_gateway: str | None,
                           account_id: uuid.UUID | None) -> tuple[uuid.UUID, uuid.UUID] | None:
        """(carrier id, gateway id) of a call the carrier sent to our registration (sofia's
        ``sip_gateway_name``): the registering gateway's carrier, if the dialled number's
        account may use it (a platform carrier or its own); None otherwise."""
        gateway_id = gateway_id_from_name(sofia_gateway or "")
        for gw in self.outbound_gateways:
            if gw.id == gateway_id and gw.register:
                owner = self.carriers[gw.carrier_id].account_id if gw.carrier_id in self.carriers else None
                if owner is None or owner == account_id:
                    return gw.carrier_id, gw.id
        return None

    def carrier_srtp(self, carrier_id: uuid.UUID | None) -> str:
        """The carrier's SRTP mode ("off" for an unknown carrier)."""
        carrier = self.carriers.get(carrier_id) if carrier_id is not None else None
        return carrier.srtp if carrier is not None else "off"


def compile_routing(rows: RoutingRows, *, cooperate: Callable[[], None] | None = None,
                    registrars: RegistrarAddresses | None = None) -> RoutingTable:
    """``registrars``: the resolved addresses of registrars known by host name (the caller
    resolves, so compiling stays free of DNS)."""
    started = time.perf_counter()
    entries, rejected = build_acl(rows.gateways, rows.carriers, registrars)
    table = RoutingTable(
        lcr=compile_table(rows, cooperate=cooperate),
        identifier=CarrierIdentifier(entries),
        acl_entries=tuple(entries),
        rejected_gateways=tuple(rejected),
        outbound_gateways=tuple(outbound_gateways(rows.gateways, rows.carriers)),
        compile_seconds=0.0,
        carriers={c.id: c for c in rows.carriers},
        registrars=dict(registrars or {}),
        gateways=tuple(rows.gateways),
    )
    return replace(table, compile_seconds=time.perf_counter() - started)


class RoutingCache:
    def __init__(self, loader: Callable[[], RoutingRows] | None = None, resolver: Resolver | None = None) -> None:
        if loader is None:
            from app.routing.loader import load_rows
            loader = load_rows
        self._loader = loader
        self.resolver = resolver  # registrars known by host name (None: the system resolver)
        self._table: RoutingTable | None = None
        self._lock = gevent.lock.RLock()
        self.reloads = 0

    def table(self) -> RoutingTable:
        table = self._table
        if table is not None:
            return table
        with self._lock:
            if self._table is None:
                self._table = self._compile()
            return self._table

    def reload(self) -> RoutingTable:
        """Compile now and swap (the old snapshot keeps serving until the new one is ready)."""
        with self._lock:
            self._table = self._compile()
            return self._table

    def resolve_registrars(self) -> RegistrarAddresses:
        """What DNS says now for the registrars of the current snapshot's gateways."""
        return resolve_registrars(self.table().gateways, self.resolver)

    def _compile(self) -> RoutingTable:
        rows = self._loader()
        table = compile_routing(rows, cooperate=gevent.idle,
                                registrars=resolve_registrars(rows.gateways, self.resolver))
        self.reloads += 1
        for problem in table.lcr.problems:
            log.warning("routing: %s", problem)
        for rejected in table.rejected_gateways:
            log.warning("routing: gateway %s left out of the ACL: %s", rejected.gateway_id, rejected.reason)
        return table

    def identify_carrier(self, source_ip: str | None,
                         account_id: uuid.UUID | None = None) -> tuple[uuid.UUID, uuid.UUID] | None:
        return self.table().identify_carrier(source_ip, account_id)

    def describe_gateway(self, gateway_id: uuid.UUID) -> tuple[uuid.UUID, str] | None:
        return self.table().describe_gateway(gateway_id)

    def registered_carrier(self, sofia_gateway: str | None,
                           account_id: uuid.UUID | None) -> tuple[uuid.UUID, uuid.UUID] | None:
        return self.table().registered_carrier(sofia_gateway, account_id)

    def carrier_srtp(self, carrier_id: uuid.UUID | None) -> str:
        return self.table().carrier_srtp(carrier_id)


class RoutingReloader:
    """Glue for ``routing.config.changed``: recompile, rewrite the generated FreeSWITCH files,
    and apply them on every connected FreeSWITCH (``esl_connections()`` returns their inbound
    ESL connections, each with ``api(command)``)."""

    def __init__(self, cache: RoutingCache, generated_dir: Path | str,
                 esl_connections: Callable[[], Iterable[EslApi]],
                 *, sleep: Callable[[float], None] = gevent.sleep, health: Any = None,
                 directory: Callable[[], bool] | None = None) -> None:
        self.cache = cache
        # rewrites the agents' directory include, True when it changed (app/contact/directory)
        self.directory = directory
        self.health = health  # GatewayHealth: reconciled after a FreeSWITCH (re)connect
        self.generated_dir = Path(generated_dir)
        self.esl_connections = esl_connections
        self.sleep = sleep
        self._lock = gevent.lock.RLock()
        # routing configurations applied (one per routing.config.changed, one per catch-up):
        # /readyz reports it, so a harness can tell each process applied its changes
        self.applied = 0

    def handle_event(self, envelope: Any) -> tuple[bool, GatewayDiff]:
        """EventConsumer handler (binding system.events / routing.config.changed)."""
        if getattr(envelope, "type", ROUTING_CHANGED) != ROUTING_CHANGED:
            return False, GatewayDiff((), (), ())
        return self.sync()

    def sync(self, *, force: bool = False) -> tuple[bool, GatewayDiff]:
        with self._lock:
            table = self.cache.reload()
            acl_changed, diff = write_generated(self.generated_dir, table.acl_entries, table.outbound_gateways)
            directory_changed = self.directory() if self.directory is not None else False
            for esl in list(self.esl_connections()):
                try:
                    apply_to_freeswitch(esl, acl_changed, diff, sleep=self.sleep, force=force,
                                        xml_changed=directory_changed)
                except Exception:  # one unreachable switch must not stop the others
                    log.exception("routing: applying config to a FreeSWITCH failed")
            log.info("routing: configuration applied (reload %d: %d ACL entries, %d outbound "
                     "gateways, ACL %s)", self.cache.reloads, len(table.acl_entries),
                     len(table.outbound_gateways), "reloaded" if acl_changed else "unchanged")
            self.applied += 1
            return acl_changed, diff

    def on_freeswitch_connected(self, esl: EslApi) -> None:
        """After (re)connecting to a FreeSWITCH: it may have missed changes while away."""
        with self._lock:
            table = self.cache.table()
            acl_changed, diff = write_generated(self.generated_dir, table.acl_entries, table.outbound_gateways)
            if self.directory is not None:
                self.directory()
            apply_to_freeswitch(esl, acl_changed, diff, sleep=self.sleep, force=True)
            if self.health is not None:
                self.health.reconcile(esl, (gateway_name(g.id) for g in table.outbound_gateways))


_default_cache: RoutingCache | None = None


def default_cache() -> RoutingCache:
    """The process-wide cache (controller): created on first use, loading from the database."""
    global _default_cache
    if _default_cache is None:
        _default_cache = RoutingCache()
    return _default_cache


def identify_carrier(source_ip: str | None,
                     account_id: uuid.UUID | None = None) -> tuple[uuid.UUID, uuid.UUID] | None:
    """Carrier and gateway of an inbound trunk call from its source IP (``variable_sip_network_ip``
    or ``variable_sip_received_ip``), longest prefix first; None for an unknown address. Pass
    the dialled number's ``account_id`` to refuse another tenant's private trunk (None back)."""
    return default_cache().identify_carrier(source_ip, account_id)


class RoutingListener:
    """The consumer of ``routing.config.changed`` on a private, server-named queue. A change
    committed while this controller had no queue (its first moments after a start, a broker
    reconnect) reached no one, so at every bind, before the first delivery, the snapshot is
    rebuilt and applied once (cheap: nothing is sent to FreeSWITCH when the files do not
    change). Measured on the real switch: a gateway added 60 ms after a controller restart was
    otherwise never applied. A catch-up that fails counts as a lost connection: the consumer
    reconnects after its backoff and catches up again, and stays not ready meanwhile."""

    def __init__(self, reloader: RoutingReloader, **consumer_kw: Any) -> None:
        from app.events.consumer import EventConsumer
        from app.events.exchanges import SYSTEM_EVENTS

        self.reloader = reloader
        self.catch_ups = 0
        self.consumer = EventConsumer([(SYSTEM_EVENTS, ROUTING_CHANGED)], reloader.handle_event,
                                      on_bound=self._catch_up, **consumer_kw)
        self.ready = self.consumer.ready

    def _catch_up(self) -> None:
        self.reloader.sync()
        self.catch_ups += 1

    def start(self) -> "RoutingListener":
        self.consumer.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.consumer.stop(timeout)


def start_routing_listener(reloader: RoutingReloader, **consumer_kw: Any) -> RoutingListener:
    """Consume ``routing.config.changed`` on system.events (every controller must rebuild its
    own snapshot) and run the reloader."""
    return RoutingListener(reloader, **consumer_kw).start()
