"""What ``sbc status`` shows on one screen, gathered from the sources of truth:

- switches: each ``freeswitch.nodes`` entry asked directly over its event socket (``status`` for
  the version, ``show channels`` for live channels, ``module_exists`` for our modules) — so the
  answer does not depend on a controller being up;
- services: the last ``system.service.*`` event of each instance in the event outbox (every
  process writes its heartbeat there; published rows are kept for the retention period), with
  what the controller reports (its live calls, its view of each switch);
- the outbox backlog, and calls in progress per account from the Redis limiter's slots;
- agent registrations from Redis (what the controllers record from sofia's register events):
  registered phones per transport and the latest changes with contact, transport, user agent,
  expiry and when it changed.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Optional

import gevent
import redis
from sqlalchemy import text

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.config import RuntimeConfig
from app.db.engine import platform_session
from app.routing.gateway_registration import read_states
from app.routing.node_modules import missing_modules
from app.settings import get_settings
from esl.inbound import InboundConnection

log = logging.getLogger(__name__)

SWITCH_TIMEOUT_SECONDS = 3.0
# a service whose last heartbeat is older than this many intervals is shown as stale
STALE_INTERVALS = 3
_VERSION = re.compile(r"FreeSWITCH \(Version ([^)\s]+)")


@dataclass
class SwitchStatus:
    node: str
    connected: bool
    version: Optional[str] = None
    channels: Optional[int] = None
    missing_modules: list[str] = field(default_factory=list)
    error: Optional[str] = None


@dataclass
class ServiceStatus:
    service: str
    instance: str
    host: str
    pid: int
    state: str              # up | stale | down
    last_seen_seconds: float
    details: dict[str, Any]


@dataclass
class AgentRegistration:
    agent: str              # <sip user>@<account subdomain>
    registered: bool
    transport: Optional[str]
    contact: Optional[str]
    user_agent: Optional[str]
    expires_at: Optional[datetime]
    changed_at: Optional[datetime]


@dataclass
class Status:
    switches: list[SwitchStatus]
    services: list[ServiceStatus]
    outbox_backlog: Optional[int]
    outbox_oldest_seconds: Optional[float]
    calls_by_account: dict[str, int]
    errors: list[str] = field(default_factory=list)
    registered_by_transport: dict[str, int] = field(default_factory=dict)
    registration_changes: list[AgentRegistration] = field(default_factory=list)
    # gateway id -> {state, changedAt, sipStatus, phrase}: the carriers the switches register to
    gateway_registrations: dict[str, dict[str, Any]] = field(default_factory=dict)


# the latest registration changes shown (``sbc status --json`` too)
RECENT_REGISTRATIONS_SHOWN = 10


def switch_status(host: str, port: int, password: str) -> SwitchStatus:
    node = InboundConnection(host, port, password, reconnect=False, connect_timeout=SWITCH_TIMEOUT_SECONDS,
                             command_timeout=SWITCH_TIMEOUT_SECONDS)
    where = f"{host}:{port}"
    try:
        with gevent.Timeout(SWITCH_TIMEOUT_SECONDS * 4):
            node.connect()
            version = _VERSION.search(node.api("status"))
            channels = json.loads(node.api("show channels as json") or "{}").get("row_count", 0)
            lacking = missing_modules(node)
        return SwitchStatus(where, True, version.group(1) if version else None, int(channels), lacking)
    except BaseException as exc:  # gevent.Timeout too: an unreachable switch is a row, not a crash
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return SwitchStatus(where, False, error=f"{type(exc).__name__}: {exc}".strip()[:200])
    finally:
        node.close()


def services(interval_seconds: float, now: Optional[datetime] = None) -> list[ServiceStatus]:
    """The latest service event per instance seen within the outbox retention window."""
    now = now or datetime.now(timezone.utc)
    with platform_session() as session:
        rows = session.execute(text(
            "SELECT DISTINCT ON (body->'payload'->>'instanceId') routing_key, created_at, body->'payload' AS p "
            "FROM event_outbox WHERE routing_key LIKE 'system.service.%' "
            "ORDER BY body->'payload'->>'instanceId', created_at DESC")).all()
    result = []
    for row in rows:
        age = (now - row.created_at).total_seconds()
        if row.routing_key == "system.service.down":
            state = "down"
        else:
            state = "up" if age <= STALE_INTERVALS * interval_seconds else "stale"
        p = row.p or {}
        result.append(ServiceStatus(p.get("service", "?"), p.get("instanceId", "?"), p.get("host", "?"),
                                    int(p.get("pid") or 0), state, round(age, 1), p.get("details") or {}))
    return sorted(result, key=lambda s: (s.state != "up", s.service, s.instance))


def outbox_backlog() -> tuple[int, float]:
    with platform_session() as session:
        row = session.execute(text(
            "SELECT count(*) AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) AS age "
            "FROM event_outbox WHERE published_at IS NULL")).one()
    return int(row.n), float(row.age)


def calls_by_account(limiter: ConcurrencyLimiter) -> dict[str, int]:
    """subdomain → live calls, for accounts holding at least one limiter slot."""
    prefix = f"{limiter.prefix}account:"
    ids = {key.decode()[len(prefix):] for key in limiter.redis.scan_iter(match=f"{prefix}*", count=500)}
    if not ids:
        return {}
    with platform_session() as session:
        names: dict[str, str] = dict(session.execute(text("SELECT id::text, subdomain FROM accounts WHERE id::text = ANY(:ids)"),
                                     {"ids": sorted(ids)}).all())
    counts = {names.get(i, i): limiter.counts(i)[0] for i in ids}
    return {name: n for name, n in sorted(counts.items()) if n}


def registrations(client: redis.Redis, prefix: str) -> tuple[dict[str, int], list[AgentRegistration]]:
    """Registered phones per transport (only those with some) and the latest changes."""
    from app.contact.presence import Presence
    from app.contact.registrations import RegistrationStore

    store = RegistrationStore(Presence(client, prefix))
    counts = {t: n for t, n in store.counts_by_transport().items() if n}
    recent = [AgentRegistration(f"{user}@{domain}", r.registered, r.transport, r.contact, r.user_agent,
                                r.expires_at, r.changed_at)
              for domain, user, r in store.recent(RECENT_REGISTRATIONS_SHOWN)]
    return counts, recent


def gather(config: RuntimeConfig, redis_client: Optional[redis.Redis] = None) -> Status:
    errors: list[str] = []
    jobs = [gevent.spawn(switch_status, n.host, n.port, n.password) for n in config.freeswitch_nodes]
    try:
        seen = services(config.heartbeat_interval_seconds)
        backlog, oldest = outbox_backlog()
    except Exception as exc:
        errors.append(f"PostgreSQL: {exc}")
        seen, backlog, oldest = [], None, None
    try:
        limiter = ConcurrencyLimiter(redis_client, slot_ttl_seconds=limits.LIMITER_SLOT_TTL_SECONDS)
        by_account = calls_by_account(limiter)
        by_transport, changes = registrations(limiter.redis, get_settings().redis_key_prefix)
        gateways = {str(k): v for k, v in read_states(limiter.redis, get_settings().redis_key_prefix).items()}
    except Exception as exc:
        errors.append(f"Redis: {exc}")
        by_account, by_transport, changes, gateways = {}, {}, [], {}
    gevent.joinall(jobs)
    return Status([j.value for j in jobs], seen, backlog, oldest, by_account, errors, by_transport, changes,
                  gateways)


def _ago(when: Optional[datetime], now: datetime) -> str:
    return f"{(now - when).total_seconds():.0f} s ago" if when else "?"


def render(status: Status) -> str:
    """One screen of text."""
    lines = ["SWITCHES"]
    for s in status.switches:
        if s.connected:
            missing = ", ".join(s.missing_modules) if s.missing_modules else "none"
            lines.append(f"  {s.node:<22} connected  version {s.version or '?'}  channels {s.channels}  "
                         f"missing modules: {missing}")
        else:
            lines.append(f"  {s.node:<22} UNREACHABLE  {s.error}")
    lines.append("SERVICES (by heartbeat)")
    if not status.services:
        lines.append("  none seen")
    for svc in status.services:
        extra = ""
        if svc.service == "controller":
            switches = svc.details.get("switches") or {}
            up = sum(1 for v in switches.values() if v.get("connected"))
            extra = f"  live calls {svc.details.get('liveCalls', '?')}  switches {up}/{len(switches)} connected"
        lines.append(f"  {svc.service:<11} {svc.state:<6} {svc.host}[{svc.pid}]  last seen {svc.last_seen_seconds:g} s ago{extra}")
    if status.outbox_backlog is None:
        lines.append("OUTBOX  unknown")
    else:
        lines.append(f"OUTBOX  {status.outbox_backlog} unpublished, oldest {status.outbox_oldest_seconds:.1f} s")
    lines.append("CALLS IN PROGRESS")
    if not status.calls_by_account:
        lines.append("  none")
    for account, n in status.calls_by_account.items():
        lines.append(f"  {account:<30} {n}")
    now = datetime.now(timezone.utc)
    counts = "  ".join(f"{t} {n}" for t, n in status.registered_by_transport.items()) or "none"
    lines.append(f"AGENT REGISTRATIONS  registered now: {counts}")
    lines.append("GATEWAY REGISTRATIONS" + ("" if status.gateway_registrations else "  none"))
    for gateway_id, reg in sorted(status.gateway_registrations.items()):
        changed = datetime.fromtimestamp(reg.get("changedAt") or 0, timezone.utc)
        reply = " ".join(str(x) for x in (reg.get("sipStatus"), reg.get("phrase")) if x)
        lines.append(f"  {gateway_id}  {reg.get('state', '?'):<10} since {_ago(changed, now)}  {reply}".rstrip())
    for r in status.registration_changes:
        if r.registered:
            until = f"expires in {(r.expires_at - now).total_seconds():.0f} s" if r.expires_at else ""
            lines.append(f"  {r.agent:<40} registered {r.transport or '?'}  {r.contact or ''}  "
                         f"{r.user_agent or ''}  {until}  since {_ago(r.changed_at, now)}")
        else:
            lines.append(f"  {r.agent:<40} unregistered  last contact {r.contact or '-'}  "
                         f"{_ago(r.changed_at, now)}")
    for error in status.errors:
        lines.append(f"ERROR  {error}")
    return "\n".join(lines)
