"""The controller process: every call FreeSWITCH hands over, and the node-wide ESL links.

Started by ``sbc controller`` (and by ``sbc run``). It owns:
- the outbound ESL server (FreeSWITCH's ``socket`` app connects once per call → CallSession);
- one inbound ESL connection per FreeSWITCH node from ``cluster_config`` (gateway health,
  ``reloadacl``/gateway rescans on routing changes, reconciliation after a reconnect, the
  module check, a watchdog for a switch that hangs with its sockets open);
- the dialler for ``call.originate`` (app/voice/originator.py: least-cost routing, ``bgapi originate``);
- ``call.control`` requests (app/voice/call_control.py: the agent channel's reject, hangup, hold, dtmf);
- the supervisor legs of ``call.supervise`` (app/voice/supervisor.py: listen, whisper, barge);
- the concurrency limiter's slot refresher, the event outbox relay, the service heartbeat,
  and the listeners for ``system.config.changed`` and ``routing.config.changed``.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import time
from typing import Collection, Optional

import gevent
import gevent.lock
from prometheus_client import REGISTRY

from app.calls.heartbeat import ServiceHeartbeat
from app.calls.limiter import ConcurrencyLimiter, start_refresher
from app.calls.recovery import LOST_CALL_CAUSE, lost_controller_ended_by, recover_lost_calls
from app.calls.route_snapshot import RouteSnapshot, start_snapshot_refresher
from app.calls.siblings import SiblingSessions
from app.config import RuntimeConfig, start_config_listener
from app.contact.cluster import write_cluster_acl
from app.contact.directory import DirectoryWriter
from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.contact.queue_metrics import QueueMetricsEmitter
from app.contact.registrations import REGISTRATION_EVENTS, RegistrationTracker, publish_registration_event
from app.dev_mode import listen_host
from app.events.consumer import RedisSeenIds
from app.events.payloads import emit
from app.events.publisher import start_publisher, stop_publisher
from app.gc_tuning import freeze_startup_heap
from app.media.moh import MusicLibrary
from app.ops.children import child_ops_port
from app.ops.collectors import QueueCollector, SwitchCollector
from app.ops.health import Readiness, dependency_checks, freeswitch_check, routing_check
from app.ops.http import OpsEndpoints, start_ops_server
from app.redis_pool import shared_redis
from app.routing.cache import RoutingCache, RoutingListener, RoutingReloader, start_routing_listener
from app.routing.dialer import LcrDialer
from app.routing.fsconfig import generated_dir
from app.routing.gateway_health import SUBSCRIBE_COMMAND, GatewayHealth
from app.routing.gateway_registration import GatewayRegistrations
from app.routing.node_modules import missing_modules
from app.routing.registrar_hosts import RegistrarRefresher
from app.settings import get_settings
from app.voice.agent_holds import AGENT_HOLD_EVENTS, AgentHoldRelay
from app.voice.call_control import CallControl, start_call_control_consumer
from app.voice.live_control import LiveControl
from app.voice.originator import Originator, start_originate_consumer
from app.voice.orphans import OrphanSweeper
from app.voice.overload import LoopLagProbe, SetupGate, refuse_unanswered
from app.voice.reconcile import close_calls_from, close_vanished_calls
from app.voice.services import CallServices
from app.voice.session import CallSession
from app.voice.supervisor import Supervisor, start_supervise_consumer
from app.voice.watchdog import NodeWatchdog
from app.webhooks.client import get_client
from esl.errors import EslError
from esl.inbound import InboundConnection
from esl.outbound import OutboundConnection, OutboundServer

log = logging.getLogger(__name__)

NODE_EVENTS = tuple(SUBSCRIBE_COMMAND.split()[2:])  # CUSTOM sofia::gateway_state ...


class Controller:
    def __init__(self, config: Optional[RuntimeConfig] = None, *, process_index: int = 0,
                 processes: int = 1) -> None:
        """``processes`` > 1: this is sibling ``process_index`` of ``sbc controller
        --processes N`` — the port is shared (SO_REUSEPORT), the calls each sibling drives are
        shared through Redis (app/calls/siblings.py), the ops port is ``health.controller_port
        + 1 + process_index`` (the supervisor answers on the port itself: app/ops/children.py)."""
        settings = get_settings()
        self.process_index = process_index
        self.processes = processes
        self.config = config or RuntimeConfig.load()
        self.redis = shared_redis(settings.redis_url)
        self.routing = RoutingCache()
        self.health = GatewayHealth(self.redis, settings.redis_key_prefix, emit,
                                    describe=self.routing.describe_gateway)
        self.gateway_registrations = GatewayRegistrations(self.redis, settings.redis_key_prefix, emit,
                                                          describe=self.routing.describe_gateway)
        self.numbers = RouteSnapshot()  # number lookups that ride out a database blip
        self.services = CallServices(
            limiter=ConcurrencyLimiter(self.redis,
                                       slot_ttl_seconds=self.config.limiter_slot_ttl_seconds),
            redis=self.redis,
            webhooks=get_client(),
            recordings_dir=self.config.recording_dir,
            ws_vendor=self.config.webhook_vendor,
            routing=self.routing,
            dialer=LcrDialer(self.routing, self.health),
            find_route=self.numbers.find,
        )
        self.presence = Presence(self.redis, settings.redis_key_prefix)
        self.registrations = RegistrationTracker(self.presence, publish_registration_event)
        self.services.contact = ContactCentre(self.presence)
        self.services.music = MusicLibrary(self.config.moh_dir)  # writes the default music if missing
        self.services.first_reply_deadline = self.config.webhook_first_reply_deadline_seconds
        self.config.on_reload(lambda config: setattr(
            self.services, "first_reply_deadline", config.webhook_first_reply_deadline_seconds))
        host, port = self.config.controller_listen
        self.listen_host = host = listen_host(host)  # loopback in development mode (app.dev_mode)
        self.server = OutboundServer(self._serve_call, host, port, reuse_port=processes > 1)
        self.lag = LoopLagProbe()
        self.gate = SetupGate(
            lambda: len(self.server.connections) - len(self.services.live_calls), self.lag,
            max_in_flight=lambda: self.config.get("controller.max_setups_in_flight"),
            max_lag_ms=lambda: self.config.get("controller.max_loop_lag_ms"))
        self.nodes: list[InboundConnection] = []
        self.sweepers: list[OrphanSweeper] = []
        self.watchdogs: list[NodeWatchdog] = []
        self.reloader = RoutingReloader(self.routing, generated_dir(),
                                        lambda: [n for n in self.nodes if n.connected],
                                        health=self.health,
                                        directory=DirectoryWriter(generated_dir()).write)
        self.originator = Originator(
            self.services, lambda: self.nodes,
            lambda: (self.config.controller_advertise_host, self.server.address[1]))
        # supervisor listen/whisper/barge: call.supervise commands (app/voice/supervisor.py)
        self.supervisor = Supervisor(self.redis, settings.redis_key_prefix, lambda: self.nodes)
        self._background: list = []
        self._recovering = gevent.lock.Semaphore()
        self.missing_modules: dict[str, list[str]] = {}  # "host:port" -> modules its image lacks
        self.heartbeat = ServiceHeartbeat(
            "controller", interval_seconds=lambda: self.config.heartbeat_interval_seconds,
            details=lambda: {
                "liveCalls": len(self.services.live_calls),
                "nodes": {where: {"missingModules": modules}
                          for where, modules in self.missing_modules.items()},
                "switches": {f"{n.host}:{n.port}": {"connected": n.connected, "reconnects": n.reconnects}
                             for n in self.nodes}})
        # /healthz /readyz /metrics (app/ops): started with the controller, port from cluster_config
        self.readiness = Readiness("controller", {
            **dependency_checks(settings),
            "freeswitch": freeswitch_check(lambda: self.nodes, lambda: self.missing_modules),
            "routing": routing_check(lambda: self.routing_listener)})
        self.collectors = [SwitchCollector(lambda: self.nodes, lambda: self.missing_modules),
                           QueueCollector()]
        self.ops_server = None
        self.routing_listener: Optional[RoutingListener] = None  # started with the controller
        self.live_control: Optional[LiveControl] = None  # started with the controller
        self.siblings: Optional[SiblingSessions] = None
        if processes > 1:
            self.siblings = SiblingSessions(
                self.redis, settings.redis_key_prefix,
                f"{self.config.controller_advertise_host}:{self.server.address[1]}",
                process_index, processes, self._sessions_here)

    def start(self) -> None:
        start_publisher(retention_seconds=lambda: self.config.outbox_retention_seconds)
        self.routing.table()  # compile before the first call, not during it
        self.lag.start()
        self.server.start()
        if self.siblings is not None:
            self.siblings.start()
        nodes = self.config.freeswitch_nodes
        # several nodes: the cluster ACL (loaded by the reloadacl sent on connect) and each
        # node's agent-profile address let a caller on one node be offered an agent of another
        write_cluster_acl(generated_dir(), nodes)
        for node in nodes:
            self._connect_node(node.host, node.port, node.password,
                               node.agent_sip_address if len(nodes) > 1 else "")
        self.routing_listener = start_routing_listener(self.reloader)
        # POST /api/calls/:callId/actions and agent transfers for the calls this process drives
        self.live_control = LiveControl(self.redis, get_settings().redis_key_prefix,
                                        self.services.controller_id, self.services.live_sessions).start()
        self._background = [
            start_refresher(self.services.limiter,
                            lambda: [*self.services.live_calls, *self.originator.pending],
                            interval_seconds=self.config.limiter_refresh_seconds),
            start_originate_consumer(self.originator,
                                     RedisSeenIds(self.redis, name="controller.originate")),
            start_call_control_consumer(CallControl(lambda: self.nodes),
                                        RedisSeenIds(self.redis, name="controller.call.control")),
            start_supervise_consumer(self.supervisor,
                                     RedisSeenIds(self.redis, name="controller.supervise")),
            self.live_control,
            start_config_listener(self.config),
            self.routing_listener,
            start_snapshot_refresher(self.numbers),
            # registrars known by host name: resolved again on a schedule, the ACL follows DNS
            RegistrarRefresher(lambda: self.routing.table().registrars, self.routing.resolve_registrars,
                               self.reloader.sync).start(),
            # queue.metrics once per period across every controller (a Redis lock per period)
            QueueMetricsEmitter(self.redis, get_settings().redis_key_prefix, emit=emit).start(),
        ]
        self.heartbeat.start()
        for collector in self.collectors:
            REGISTRY.register(collector)
        self.ops_server = start_ops_server(
            OpsEndpoints(self.readiness), self.listen_host,
            child_ops_port(self.config.health_controller_port, self.process_index, self.processes))
        log.info("controller up: outbound ESL on %s:%s, %d FreeSWITCH node(s) configured "
                 "(connected in the background: see /readyz)", *self.server.address, len(self.nodes))
        freeze_startup_heap()

    def _sessions_here(self) -> set[str]:
        """Calls this controller has a socket for (in setup, live or finishing)."""
        known = set(self.services.live_calls) | set(self.services.finishing)
        if self.siblings is not None:  # published to the siblings: a held record counts too
            known |= set(self.services.records.held_call_ids)
        for conn in list(self.server.connections):
            with contextlib.suppress(EslError):  # before connect(): no channel data yet
                known.add(conn.uuid)
        return known

    def _sessions_known(self) -> Collection[str]:
        """The orphan sweeper's view: this process's calls, and its siblings' when it has any."""
        known = self._sessions_here()
        if self.siblings is not None:
            known |= self.siblings.others()
        return known

    def _serve_call(self, conn: OutboundConnection) -> None:
        """One socket from FreeSWITCH: a call session, unless the controller is overloaded."""
        reason = self.gate.refusal()
        if reason is not None:
            self.gate.turn_away(lambda: refuse_unanswered(conn), reason)
            return
        CallSession(conn, self.services).run()

    def _connect_node(self, host: str, port: int, password: str, agent_sip_address: str = "") -> None:
        """Connect in the background: the controller serves calls while a switch is away."""
        ips = _addresses(host)

        def check_modules() -> None:
            """The image may lack modules of modules.conf.xml (logged per module, heartbeat)."""
            try:
                self.missing_modules[f"{host}:{port}"] = missing_modules(node)
            except EslError as exc:  # link lost mid-check: the reconnect checks again
                log.warning("module check of FreeSWITCH %s:%s interrupted: %s", host, port, exc)

        def reconcile(rows: list[dict]) -> None:
            """After a reconnect: calls gone while we were away, and routing it may have missed."""
            close_vanished_calls(self.services.live_calls, ips, rows)
            gevent.spawn(self.recover_lost_calls)
            self.reloader.on_freeswitch_connected(node)
            check_modules()

        node = InboundConnection(host, port, password,
                                 events=NODE_EVENTS + REGISTRATION_EVENTS + AGENT_HOLD_EVENTS,
                                 on_reconcile=reconcile)
        AgentHoldRelay(self.services.live_calls).attach(node)  # holds on agents' legs
        self.health.attach(node)
        self.gateway_registrations.attach(node)  # carriers we register to: REGED, FAIL_WAIT...
        self.registrations.attach(node, agent_sip_address)
        self.nodes.append(node)
        self.sweepers.append(OrphanSweeper(node, self._sessions_known,
                                           self.services.limiter.holding).start())
        # a switch that hangs with its sockets open: end its calls, drop the link, reconnect
        self.watchdogs.append(NodeWatchdog(
            node, on_frozen=lambda: close_calls_from(self.services.live_calls, ips)).start())

        def first_connect() -> None:
            delay = 0.5
            while True:
                try:
                    node.connect()
                    gevent.spawn(self.recover_lost_calls)
                    self.reloader.on_freeswitch_connected(node)
                    check_modules()
                    return
                except Exception as exc:
                    log.warning("FreeSWITCH %s:%s not reachable yet (%s); retrying", host, port, exc)
                    gevent.sleep(delay)
                    delay = min(delay * 2, 10.0)

        gevent.spawn(first_connect)

    def recover_lost_calls(self) -> None:
        """Record the calls a lost controller left unrecorded (app/calls/recovery.py). Runs once
        every switch has answered: a call counts as ended only when no switch lists it."""
        if not self.nodes or not all(node.connected for node in self.nodes):
            return
        with self._recovering:
            try:
                channels = []
                for node in self.nodes:
                    def hang_up(call_id: str, node: InboundConnection = node) -> None:
                        node.api(f"uuid_kill {call_id} {LOST_CALL_CAUSE}")
                    channels += [(row, hang_up) for row in node.show_channels(timeout=10)]
                ended_by = lost_controller_ended_by(self.heartbeat.instance_id,
                                                    self.heartbeat.started_at,
                                                    self.config.heartbeat_interval_seconds)
                recover_lost_calls(_Busy(self.services, self.siblings), channels,
                                   our_socket=f"{self.config.controller_advertise_host}:"
                                              f"{self.server.address[1]}",
                                   release=self.services.limiter.release, ended_by=ended_by,
                                   settle=self.siblings.settle if self.siblings else None)
            except Exception:  # the database or a switch went away: the next connect retries
                log.exception("recovery of lost calls failed; retried on the next reconnect")

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def stop(self) -> None:
        self.lag.stop()
        if self.siblings is not None:
            self.siblings.stop()
        for sweeper in self.sweepers:
            sweeper.stop()
        if self.ops_server is not None:
            self.ops_server.stop(timeout=1)
        for collector in self.collectors:
            with contextlib.suppress(KeyError):
                REGISTRY.unregister(collector)
        self.heartbeat.stop()
        self.server.stop(timeout=5)
        for watchdog in self.watchdogs:
            watchdog.stop()
        for node in self.nodes:
            node.close()
        for item in self._background:
            stop = getattr(item, "stop", None)
            stop() if stop else item.kill()
        stop_publisher()


class _Busy:
    """The calls this controller is driving or recording, looked up live (not a snapshot:
    a call that starts while recovery runs must not be taken for a lost one). With sibling
    processes on the same port, their published calls count too (read at each check)."""

    # recovery lists every call.started of the outbox window against this: one Redis read per
    # period, not per call (the check after ``settle`` still reads a set published after it)
    SIBLINGS_READ_SECONDS = 0.2

    def __init__(self, services: CallServices, siblings: Optional[SiblingSessions] = None) -> None:
        self._services = services
        self._siblings = siblings
        self._sibling_calls: set[str] = set()
        self._read_at: Optional[float] = None

    def __contains__(self, call_id: object) -> bool:
        services = self._services
        if (call_id in services.live_calls or call_id in services.finishing
                or call_id in services.records.held_call_ids):
            return True
        if self._siblings is None:
            return False
        now = time.monotonic()
        if self._read_at is None or now - self._read_at > self.SIBLINGS_READ_SECONDS:
            self._sibling_calls, self._read_at = self._siblings.others(), now
        return str(call_id) in self._sibling_calls


def _addresses(host: str) -> list[str]:
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})
    except OSError:
        return [host]
