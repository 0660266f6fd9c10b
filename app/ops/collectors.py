"""Scrape-time collectors: gauges whose truth lives elsewhere (the controller's ESL links and
queue waiters, the outbox table, the agents table) are read when Prometheus asks, so nothing on
the call path keeps a second copy up to date.

Database-wide values (outbox backlog, agents by state, registered agents) are collected by the workers process
only: every process would otherwise report the same rows and sums would double. A collector
whose source is down reports nothing for that scrape (``sbc_collector_errors_total`` counts it)
rather than failing the whole exposition.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Iterator

import gevent
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import text

from app import limits
from app.db.engine import platform_session
from app.ops.metrics import QUEUE_WAITERS
from app.settings import get_settings

log = logging.getLogger(__name__)

_errors: dict[str, int] = {}


def _guarded(name: str, produce: Callable[[], list]) -> list:
    try:
        with gevent.Timeout(limits.READINESS_CHECK_TIMEOUT_SECONDS):
            return produce()
    except BaseException as exc:  # gevent.Timeout is a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        _errors[name] = _errors.get(name, 0) + 1
        log.warning("metrics collector %s failed: %s", name, exc)
        return []


class ErrorsCollector(Collector):
    def collect(self) -> Iterator:
        family = CounterMetricFamily("sbc_collector_errors", "Scrapes where a collector's source "
                                     "(database, Redis) did not answer.", labels=["collector"])
        for name, count in sorted(_errors.items()):
            family.add_metric([name], count)
        yield family


class SwitchCollector(Collector):
    """The controller's inbound ESL links: connected switches, reconnects, missing modules."""

    def __init__(self, nodes: Callable[[], Iterable[Any]], missing: Callable[[], dict[str, list[str]]]) -> None:
        self._nodes = nodes
        self._missing = missing

    def collect(self) -> Iterator:
        nodes = list(self._nodes())
        connected = GaugeMetricFamily("sbc_esl_connected_switches", "FreeSWITCH nodes whose inbound "
                                      "event socket is connected.")
        connected.add_metric([], sum(1 for n in nodes if n.connected))
        up = GaugeMetricFamily("sbc_esl_switch_up", "1 when this node's inbound event socket is "
                               "connected.", labels=["node"])
        reconnects = CounterMetricFamily("sbc_esl_reconnects", "Inbound event socket reconnects "
                                         "since the controller started.", labels=["node"])
        missing = GaugeMetricFamily("sbc_switch_missing_modules", "Modules of modules.conf.xml the "
                                    "node lacks (checked on every connect).", labels=["node"])
        missing_by_node = self._missing()
        for node in nodes:
            where = f"{node.host}:{node.port}"
            up.add_metric([where], 1 if node.connected else 0)
            reconnects.add_metric([where], node.reconnects)
            missing.add_metric([where], len(missing_by_node.get(where, [])))
        yield from (connected, up, reconnects, missing)


class QueueCollector(Collector):
    """Callers waiting in queue verbs on this controller."""

    def collect(self) -> Iterator:
        waiting, longest = QUEUE_WAITERS.snapshot()
        yield GaugeMetricFamily("sbc_queue_waiting_calls", "Callers waiting in a queue verb.", value=waiting)
        yield GaugeMetricFamily("sbc_queue_longest_wait_seconds", "How long the longest-waiting "
                                "caller has waited (0 when none).", value=longest)


class DatabaseCollector(Collector):
    """Outbox backlog and agents by state: one query each, on the platform path."""

    def collect(self) -> Iterator:
        yield from _guarded("outbox", self._outbox)
        yield from _guarded("agents", self._agents)

    @staticmethod
    def _outbox() -> list:
        with platform_session() as session:
            row = session.execute(text(
                "SELECT count(*) AS backlog, "
                "COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) AS age "
                "FROM event_outbox WHERE published_at IS NULL")).one()
        return [GaugeMetricFamily("sbc_outbox_backlog", "Events written to the outbox and not yet "
                                  "published to RabbitMQ.", value=row.backlog),
                GaugeMetricFamily("sbc_outbox_oldest_unpublished_age_seconds", "Age of the oldest "
                                  "unpublished event (0 when none).", value=float(row.age))]

    @staticmethod
    def _agents() -> list:
        from app.models.enums import AGENT_STATES

        with platform_session() as session:
            counts: dict[str, int] = dict(session.execute(text("SELECT state, count(*) FROM agents GROUP BY state")).all())
        family = GaugeMetricFamily("sbc_agents", "Agents by presence state (all tenants).", labels=["state"])
        for state in AGENT_STATES:
            family.add_metric([state], counts.get(state, 0))
        return [family]



class GatewayRegistrationCollector(Collector):
    """Gateways registering to their carrier, per sofia registration state (REGED, FAIL_WAIT...:
    the fixed SOFIA_REG_STATES label set), from the state the controllers keep in Redis."""

    def __init__(self, client: Any = None) -> None:
        self._client = client

    def collect(self) -> Iterator:
        yield from _guarded("gateway_registrations", self._states)

    def _states(self) -> list:
        from app.redis_pool import shared_redis
        from app.routing.gateway_registration import counts_by_state

        settings = get_settings()
        client = self._client or shared_redis(settings.redis_url)
        family = GaugeMetricFamily("sbc_gateway_registrations", "Gateways registering to their carrier, "
                                   "by sofia registration state (all tenants).", labels=["state"])
        for state, count in counts_by_state(client, settings.redis_key_prefix).items():
            family.add_metric([state], count)
        return [family]


class RegistrationCollector(Collector):
    """Agents whose phone is registered now, per transport (all tenants, from Redis: the
    registrations the controllers track). Per transport, not per agent: the label set is the
    fixed TRANSPORTS list whatever the number of agents. Workers only, like the agents gauge."""

    def __init__(self, store: Any = None) -> None:
        self._store = store

    def collect(self) -> Iterator:
        yield from _guarded("registrations", self._registrations)

    def _registrations(self) -> list:
        from app.contact.registrations import RegistrationStore
        from app.contact.states import default_presence

        store = self._store or RegistrationStore(default_presence())
        family = GaugeMetricFamily("sbc_agents_registered", "Agents whose SIP phone is registered now, "
                                   "by transport (all tenants).", labels=["transport"])
        for transport, count in store.counts_by_transport().items():
            family.add_metric([transport], count)
        return [family]
