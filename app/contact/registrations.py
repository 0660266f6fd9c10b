"""Agent registrations from the switch: ``sofia::register`` / ``sofia::unregister`` /
``sofia::expire`` on the ``internal`` profile keep ``cc:reg:<domain>:<user>`` in Redis (TTL =
the registration's expiry), so the distributor offers calls only to registered agents.

Beside that key (what the distributor reads), the registration's details are kept so that they
can be shown (``GET /api/agents``, ``sbc status``, ``/metrics``):

- ``cc:regstate:<domain>:<user>`` — a hash: ``registered`` (1/0), ``contact``, ``transport``,
  ``user_agent``, ``expires_at`` and ``changed_at`` (epoch ms), kept STATE_KEEP_SECONDS after
  the last change so "unregistered since ..." can be shown too;
- ``cc:regs:<transport>`` — a sorted set of ``<domain>:<user>`` scored by expiry (epoch ms): the
  registered agents per transport, counted at scrape time without a key scan.

Every controller receives these events from every switch it is linked to; each update is one
Lua script that also says whether the registration *changed* (a new registration, a new contact
or transport, or the end of one). Only a change is published (``user.registered`` /
``user.unregistered``): a phone's periodic re-REGISTER is not an event, and of several
controllers handling the same switch event only the first sees a change, so it is published
once.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Optional

from app.contact.presence import Presence

log = logging.getLogger(__name__)

AGENT_PROFILE = "internal"
REGISTER = "sofia::register"
UNREGISTER = "sofia::unregister"
EXPIRE = "sofia::expire"
REGISTRATION_EVENTS: tuple[str, ...] = (REGISTER, UNREGISTER, EXPIRE)
# sofia gives no expiry on some registers (e.g. a refresh it answers itself): assume this
DEFAULT_EXPIRES_SECONDS = 3600
# An agent's last registration change stays visible this long after it (then: never seen)
STATE_KEEP_SECONDS = 30 * 86400
# The last registration changes (all tenants) kept for ``sbc status``
RECENT_CHANGES_KEPT = 1000
# The transports sofia registers over (its status header says "Registered(UDP)",
# "Registered(WSS-NAT)", ...); anything else is counted as "other". A fixed list: the metric's
# label set stays bounded whatever a phone sends.
TRANSPORTS: tuple[str, ...] = ("udp", "tcp", "tls", "ws", "wss", "other")
_STATUS_TRANSPORT = re.compile(r"\((\w+)")
_CONTACT_TRANSPORT = re.compile(r";transport=(\w+)", re.IGNORECASE)

# KEYS[1] reg key, KEYS[2] state hash, KEYS[3] the recent-changes set, KEYS[4..] the
# per-transport sets (TRANSPORTS order).
# ARGV node, expires seconds, contact, transport index (1-based), user agent, now ms, keep
# seconds, member. Returns 1 when this is a change (new registration, contact or transport).
_REGISTER = """
local was = redis.call('HGET', KEYS[2], 'registered') == '1' and redis.call('EXISTS', KEYS[1]) == 1
local old_contact = redis.call('HGET', KEYS[2], 'contact')
local old_transport = redis.call('HGET', KEYS[2], 'transport')
local transport = KEYS[3 + tonumber(ARGV[4])]
local expires_at = tonumber(ARGV[6]) + tonumber(ARGV[2]) * 1000
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local changed = (not was) or old_contact ~= ARGV[3] or old_transport ~= ARGV[9]
redis.call('HSET', KEYS[2], 'registered', '1', 'contact', ARGV[3], 'transport', ARGV[9],
           'user_agent', ARGV[5], 'expires_at', expires_at)
if changed then
  redis.call('HSET', KEYS[2], 'changed_at', ARGV[6])
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8])
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -1 - tonumber(ARGV[10]))
end
redis.call('EXPIRE', KEYS[2], ARGV[7])
for i = 4, #KEYS do redis.call('ZREM', KEYS[i], ARGV[8]) end
redis.call('ZADD', transport, expires_at, ARGV[8])
if changed then return 1 end
return 0
"""
# KEYS as above. ARGV now ms, keep seconds, member, changes kept. Returns 1 when it was registered.
_UNREGISTER = """
local was = redis.call('HGET', KEYS[2], 'registered') == '1'
redis.call('DEL', KEYS[1])
for i = 4, #KEYS do redis.call('ZREM', KEYS[i], ARGV[3]) end
if was then
  redis.call('HSET', KEYS[2], 'registered', '0', 'changed_at', ARGV[1], 'expires_at', '')
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[1], ARGV[3])
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -1 - tonumber(ARGV[4]))
  return 1
end
return 0
"""


@dataclass(frozen=True)
class Registration:
    """What the API and ``sbc status`` show of an agent's SIP registration (no secret: sofia's
    events carry none)."""
    registered: bool
    contact: Optional[str] = None
    transport: Optional[str] = None
    user_agent: Optional[str] = None
    expires_at: Optional[datetime] = None
    changed_at: Optional[datetime] = None

    def as_dict(self) -> dict[str, Any]:
        return {"registered": self.registered, "contact": self.contact, "transport": self.transport,
                "user_agent": self.user_agent, "expires_at": self.expires_at, "changed_at": self.changed_at}


NEVER_SEEN = Registration(False)


def _header(event: Any, *names: str) -> str:
    for name in names:
        value = event.get(name)
        if value:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else (value or "")


def _at(ms: Any) -> Optional[datetime]:
    text = _text(ms)
    return datetime.fromtimestamp(int(text) / 1000, tz=timezone.utc) if text.isdigit() else None


def transport_of(status: str, contact: str) -> str:
    """``Registered(WSS-NAT)`` → ``wss``; else the contact's ``;transport=``; else udp."""
    found = _STATUS_TRANSPORT.search(status or "") or _CONTACT_TRANSPORT.search(contact or "")
    name = found.group(1).lower() if found else "udp"
    return name if name in TRANSPORTS else "other"


class RegistrationStore:
    """The registration keys in Redis (module docstring)."""

    def __init__(self, presence: Presence) -> None:
        self.presence = presence
        self.redis = presence.redis
        self._register = self.redis.register_script(_REGISTER)
        self._unregister = self.redis.register_script(_UNREGISTER)

    def state_key(self, domain: str, user: str) -> str:
        return f"{self.presence.prefix}cc:regstate:{domain.lower()}:{user}"

    def transport_key(self, transport: str) -> str:
        return f"{self.presence.prefix}cc:regs:{transport}"

    def changes_key(self) -> str:
        return f"{self.presence.prefix}cc:regchanges"

    def _keys(self, domain: str, user: str) -> list[str]:
        return [self.presence.reg_key(domain, user), self.state_key(domain, user), self.changes_key(),
                *(self.transport_key(t) for t in TRANSPORTS)]

    def registered(self, domain: str, user: str, seconds: int, *, node: str = "", contact: str = "",
                   transport: str = "udp", user_agent: str = "", now_ms: Optional[int] = None) -> bool:
        """Record a REGISTER; True when it is a change worth an event."""
        transport = transport if transport in TRANSPORTS else "other"
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        return bool(self._register(keys=self._keys(domain, user), args=[
            node or "-", max(1, int(seconds)), contact, TRANSPORTS.index(transport) + 1, user_agent,
            now_ms, STATE_KEEP_SECONDS, f"{domain.lower()}:{user}", transport, RECENT_CHANGES_KEPT]))

    def unregistered(self, domain: str, user: str, *, now_ms: Optional[int] = None) -> bool:
        """Record an unregister or expiry; True when the agent was registered."""
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        return bool(self._unregister(keys=self._keys(domain, user),
                                     args=[now_ms, STATE_KEEP_SECONDS, f"{domain.lower()}:{user}",
                                           RECENT_CHANGES_KEPT]))

    def lookup(self, domain: str, users: Iterable[Optional[str]]) -> dict[str, Registration]:
        """SIP user → its registration, in one round trip. ``registered`` is the distributor's
        key (what offers go by); a registration that lapsed without an event shows its expiry
        as the last change."""
        names = [u for u in users if u]
        if not names:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for user in names:
            pipe.exists(self.presence.reg_key(domain, user))
            pipe.hgetall(self.state_key(domain, user))
        replies = pipe.execute()
        out: dict[str, Registration] = {}
        for n, user in enumerate(names):
            live, state = bool(replies[2 * n]), {_text(k): _text(v) for k, v in replies[2 * n + 1].items()}
            if not state:
                out[user] = Registration(live)
                continue
            changed_at = _at(state.get("changed_at"))
            expires_at = _at(state.get("expires_at"))
            if not live and state.get("registered") == "1":  # lapsed: no unregister/expire event came
                changed_at = expires_at or changed_at
            out[user] = Registration(live, state.get("contact") or None, state.get("transport") or None,
                                     state.get("user_agent") or None, expires_at if live else None, changed_at)
        return out

    def recent(self, count: int) -> list[tuple[str, str, Registration]]:
        """The ``count`` latest registration changes, newest first: (domain, user, now)."""
        members = [_text(m) for m in self.redis.zrevrange(self.changes_key(), 0, max(0, count - 1))]
        out = []
        for member in members:
            domain, _, user = member.partition(":")
            out.append((domain, user, self.lookup(domain, [user])[user]))
        return out

    def counts_by_transport(self, now_ms: Optional[int] = None) -> dict[str, int]:
        """Registered agents (all tenants) per transport; lapsed entries are dropped first."""
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        pipe = self.redis.pipeline(transaction=False)
        for transport in TRANSPORTS:
            pipe.zremrangebyscore(self.transport_key(transport), "-inf", now_ms)
            pipe.zcard(self.transport_key(transport))
        replies = pipe.execute()
        return {t: int(replies[2 * i + 1]) for i, t in enumerate(TRANSPORTS)}


# (routing key, SIP domain, SIP user, registration, reason) → the event published
Publisher = Callable[[str, str, str, Registration, str], None]


class RegistrationTracker:
    def __init__(self, presence: Presence, publish: Optional[Publisher] = None) -> None:
        self.presence = presence
        self.store = RegistrationStore(presence)
        self.publish = publish

    def on_event(self, event: Any, agent_sip_address: str = "") -> None:
        """``agent_sip_address``: where the other nodes reach the agent profile of the switch
        this event came from (cross-node offers); recorded against its Core-UUID."""
        if _header(event, "profile-name") != AGENT_PROFILE:
            return
        subclass = _header(event, "Event-Subclass")
        user = _header(event, "from-user", "username", "user")
        domain = _header(event, "from-host", "realm", "host")
        if not user or not domain:
            log.warning("agent registration event %s without user/domain", subclass)
            return
        if subclass == REGISTER:
            expires = _header(event, "expires")
            seconds = int(expires) if expires.isdigit() and int(expires) > 0 else DEFAULT_EXPIRES_SECONDS
            node = _header(event, "Core-UUID")
            if agent_sip_address:
                self.presence.node_seen(node, agent_sip_address)
            contact = _header(event, "contact")
            transport = transport_of(_header(event, "status"), contact)
            changed = self.store.registered(domain, user, seconds, node=node, contact=contact,
                                            transport=transport, user_agent=_header(event, "user-agent"))
            log.info("agent %s@%s registered for %d s over %s (%s)", user, domain, seconds, transport, contact)
            if changed:
                self._publish("user.registered", domain, user, "registered")
        elif subclass in (UNREGISTER, EXPIRE):
            was = self.store.unregistered(domain, user)
            reason = "unregistered" if subclass == UNREGISTER else "expired"
            log.info("agent %s@%s %s", user, domain, reason)
            if was:
                self._publish("user.unregistered", domain, user, reason)

    def _publish(self, key: str, domain: str, user: str, reason: str) -> None:
        if self.publish is None:
            return
        try:
            registration = self.store.lookup(domain, [user]).get(user, NEVER_SEEN)
            self.publish(key, domain, user, registration, reason)
        except Exception:  # the registration itself is recorded; a lost event is logged
            log.exception("%s of %s@%s not published", key, user, domain)

    def attach(self, connection: Any, agent_sip_address: str = "") -> None:
        def handler(event: Any) -> None:
            self.on_event(event, agent_sip_address)

        for name in REGISTRATION_EVENTS:
            connection.on(name, handler)


def publish_registration_event(key: str, domain: str, user: str, registration: Registration, reason: str) -> None:
    """``user.registered`` / ``user.unregistered`` through the outbox, on the account whose
    subdomain is the SIP domain; a SIP user no agent holds (credentials replaced meanwhile) is
    not published."""
    from sqlalchemy import select

    from app.db import platform_session
    from app.events.payloads import emit, user_registration
    from app.models import Account, Agent

    with platform_session() as db:
        row = db.execute(select(Agent.account_id, Agent.id).join(Account, Account.id == Agent.account_id)
                         .where(Account.subdomain == domain.lower(), Agent.sip_username == user)).first()
    if row is None:
        log.info("%s of %s@%s: no agent holds this SIP user, not published", key, user, domain)
        return
    emit(key, user_registration(row.id, sip_user=user, domain=domain.lower(), reason=reason,
                                **registration.as_dict()), account_id=row.account_id)
