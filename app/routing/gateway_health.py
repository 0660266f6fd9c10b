"""Gateway health from FreeSWITCH's OPTIONS pings (``ping`` on each sofia gateway).

sofia emits CUSTOM ``sofia::gateway_state`` only on *changes* (capture esl-captures/
gateway_state: a new gateway starts UP and is silent while healthy). We keep the down set in
Redis, so every controller and the LCR skip a down gateway until sofia says it is up again, and
publish ``system.gateway.down`` / ``system.gateway.up`` on system.events exactly once per
change: the compare-and-set is one Lua script, so several controllers receiving the same
FreeSWITCH event publish it once between them.

``sofia::gateway_add`` resets a gateway to UP (that is what sofia assumes for a new gateway and
why it will send DOWN again if the ping still fails); ``sofia::gateway_delete`` forgets it.
"""
from __future__ import annotations

import logging
import re
import uuid
from typing import Any, Callable, Iterable, Protocol

import redis

from app.events.payloads import gateway_state
from app.routing.lcr import gateway_id_from_name

log = logging.getLogger(__name__)

GATEWAY_STATE = "sofia::gateway_state"
GATEWAY_ADD = "sofia::gateway_add"
GATEWAY_DELETE = "sofia::gateway_delete"
HEALTH_EVENTS: tuple[str, ...] = (GATEWAY_STATE, GATEWAY_ADD, GATEWAY_DELETE)  # InboundConnection(events=...)
SUBSCRIBE_COMMAND = f"event plain CUSTOM {GATEWAY_STATE} {GATEWAY_ADD} {GATEWAY_DELETE}"

# KEYS[1] = hash gateway_id -> "up"|"down"; ARGV = gateway_id, new state.
# Returns 1 when the stored state changed (first sighting of "up" is not a change: sofia
# starts every gateway UP, so a missing entry already means up).
_CAS = """
local old = redis.call('HGET', KEYS[1], ARGV[1]) or 'up'
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if old == ARGV[2] then return 0 end
return 1
"""

# ``app.events.payloads.emit``'s shape: (routing key, payload); the exchange follows the key.
Publisher = Callable[[str, dict[str, Any]], Any]
# gateway id -> (carrier id, "ip:port") from the routing snapshot; None for a gateway it lacks
Describer = Callable[[uuid.UUID], "tuple[uuid.UUID, str] | None"]
_STATUS_LINE = re.compile(r"^Status\s+(UP|DOWN)\s*$", re.M)


def parse_gateway_status(text: str) -> str | None:
    """``up``/``down`` from ``api sofia status gateway <name>`` (plain-text table, capture
    esl-captures/gateway_state: ``Status  \tUP``); None for an unknown gateway."""
    match = _STATUS_LINE.search(text or "")
    return match.group(1).lower() if match else None


class EventLike(Protocol):
    def get(self, name: str, default: str | None = None) -> str | None: ...


class GatewayHealth:
    def __init__(self, client: redis.Redis, prefix: str, publish: Publisher,
                 describe: Describer | None = None) -> None:
        self.client = client
        self.key = f"{prefix}gateway:state"
        self._publish = publish
        self._describe = describe
        self._cas = client.register_script(_CAS)

    # -- reads (LCR) ---------------------------------------------------------------------------
    def down_gateway_ids(self) -> frozenset[uuid.UUID]:
        out = set()
        for raw_id, state in self.client.hgetall(self.key).items():
            if _text(state) == "down":
                try:
                    out.add(uuid.UUID(_text(raw_id)))
                except ValueError:
                    continue
        return frozenset(out)

    def state(self, gateway_id: uuid.UUID) -> str:
        return _text(self.client.hget(self.key, str(gateway_id))) or "up"

    # -- writes (events) -----------------------------------------------------------------------
    def set_state(self, gateway_id: uuid.UUID, state: str, *, status: str | None = None,
                  phrase: str | None = None, gateway: str = "") -> bool:
        if state not in ("up", "down"):
            raise ValueError(f"unknown gateway state {state!r}")
        changed = bool(self._cas(keys=[self.key], args=[str(gateway_id), state]))
        if changed:
            known = self._describe(gateway_id) if self._describe is not None else None
            payload = gateway_state(gateway_id, carrier_id=known[0] if known else None,
                                    address=known[1] if known else None, state=state,
                                    gateway=gateway, sip_status=status, phrase=phrase)
            self._publish(f"system.gateway.{state}", payload)
            log.warning("gateway %s is %s (%s %s)", gateway or gateway_id, state.upper(), status, phrase)
        return changed

    def forget(self, gateway_id: uuid.UUID) -> None:
        self.client.hdel(self.key, str(gateway_id))

    def on_event(self, event: EventLike) -> bool | None:
        """Handler for the inbound ESL connection (CUSTOM subclasses above). Returns whether a
        state change was published; None for events that are not about our gateways."""
        subclass = event.get("Event-Subclass") or ""
        name = event.get("Gateway") or ""
        gateway_id = gateway_id_from_name(name)
        if gateway_id is None:
            return None  # not one of ours (gateway names are gw_<uuid hex>)
        if subclass == GATEWAY_STATE:
            ping = (event.get("Ping-Status") or "").upper()
            if ping not in ("UP", "DOWN"):
                return None  # registration-only state changes: app.routing.gateway_registration
            return self.set_state(gateway_id, ping.lower(), status=event.get("Status"),
                                  phrase=event.get("Phrase"), gateway=name)
        if subclass == GATEWAY_ADD:
            return self.set_state(gateway_id, "up", gateway=name)
        if subclass == GATEWAY_DELETE:
            self.forget(gateway_id)
            return False
        return None

    def reconcile(self, esl: Any, gateway_names: Iterable[str]) -> dict[str, str]:
        """Ask FreeSWITCH for each gateway's ping status and store it (publishing changes).
        Needed after a FreeSWITCH restart: every gateway restarts UP *silently*, so a "down"
        left in Redis would otherwise never be cleared."""
        seen: dict[str, str] = {}
        for name in gateway_names:
            gateway_id = gateway_id_from_name(name)
            if gateway_id is None:
                continue
            state = parse_gateway_status(esl.api(f"sofia status gateway {name}"))
            if state is None:
                continue
            self.set_state(gateway_id, state, gateway=name)
            seen[name] = state
        return seen

    def attach(self, connection: Any) -> None:
        """Register on an esl connection (``on(name, handler)``); the caller subscribes with
        SUBSCRIBE_COMMAND (or ``event plain CUSTOM ...``)."""
        for sub in HEALTH_EVENTS:
            connection.on(sub, self.on_event)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
