"""Registration state of the gateways that register to their carrier.

sofia reports a registering gateway's state in CUSTOM ``sofia::gateway_state`` (``State``:
UNREGED, TRYING, REGISTER, REGED, FAIL_WAIT, FAILED, EXPIRED, UNREGISTER, NOREG...), on every
change. The last state of each gateway is kept in Redis (read by the API, ``sbc status`` and
``/metrics``), and ``system.gateway.registration`` is published once per change: the
compare-and-set is one Lua script, so several controllers receiving the same FreeSWITCH event
publish it once between them (as gateway_health does for the ping state).
"""
from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any, Callable

import redis

from app.events.payloads import gateway_registration
from app.routing.gateway_health import GATEWAY_DELETE, GATEWAY_STATE, Describer, EventLike, Publisher
from app.routing.lcr import gateway_id_from_name

log = logging.getLogger(__name__)

# what sofia says of a gateway that does not register (every OPTIONS ping change carries it)
NOT_REGISTERING = "NOREG"
# the states a gateway that registers is healthy in
REGISTERED_STATES = frozenset({"REGED"})
# sofia's registration states (mod_sofia.h reg_state_t names): the fixed label set of
# /metrics' sbc_gateway_registrations
SOFIA_REG_STATES: tuple[str, ...] = ("UNREGED", "TRYING", "REGISTER", "REGED", "UNREGISTER", "FAILED",
                                     "FAIL_WAIT", "EXPIRED", "NOREG", "DOWN", "TIMEOUT")

# KEYS[1] = hash gateway_id -> JSON {state, changedAt, sipStatus, phrase}; ARGV = id, state,
# the new JSON. Returns the previous state ('' if none) when it changed, else false.
_CAS = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
local previous = ''
if old then previous = cjson.decode(old)['state'] end
if previous == ARGV[2] then return false end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return previous
"""


def registration_key(prefix: str) -> str:
    return f"{prefix}gateway:registration"


class GatewayRegistrations:
    def __init__(self, client: redis.Redis, prefix: str, publish: Publisher,
                 describe: Describer | None = None, clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.key = registration_key(prefix)
        self._publish = publish
        self._describe = describe
        self._clock = clock
        self._cas = client.register_script(_CAS)

    def on_event(self, event: EventLike) -> bool | None:
        """Handler for ``sofia::gateway_state`` / ``sofia::gateway_delete``; whether a change
        was published (None: not a registration event of one of our gateways)."""
        name = event.get("Gateway") or ""
        gateway_id = gateway_id_from_name(name)
        if gateway_id is None:
            return None
        subclass = event.get("Event-Subclass") or ""
        if subclass == GATEWAY_DELETE:
            self.client.hdel(self.key, str(gateway_id))
            return False
        state = (event.get("State") or "").upper()
        if subclass != GATEWAY_STATE or state in ("", NOT_REGISTERING):
            return None
        return self.set_state(gateway_id, name, state, event.get("Status"), event.get("Phrase"))

    def set_state(self, gateway_id: uuid.UUID, name: str, state: str,
                  sip_status: str | None = None, phrase: str | None = None) -> bool:
        record = json.dumps({"state": state, "changedAt": self._clock(),
                             "sipStatus": sip_status, "phrase": phrase})
        previous = self._cas(keys=[self.key], args=[str(gateway_id), state, record])
        if previous is None:
            return False
        known = self._describe(gateway_id) if self._describe is not None else None
        previous_text = previous.decode() if isinstance(previous, bytes) else str(previous)
        self._publish("system.gateway.registration", gateway_registration(
            gateway_id, carrier_id=known[0] if known else None, gateway=name, state=state,
            previous=previous_text or None, sip_status=sip_status, phrase=phrase))
        level = logging.INFO if state in REGISTERED_STATES else logging.WARNING
        log.log(level, "gateway %s registration %s -> %s (%s %s)", name, previous_text or "-", state,
                sip_status, phrase)
        return True

    def attach(self, connection: Any) -> None:
        for sub in (GATEWAY_STATE, GATEWAY_DELETE):
            connection.on(sub, self.on_event)


def counts_by_state(client: redis.Redis, prefix: str) -> dict[str, int]:
    """Gateways per registration state, every sofia state present (0 when none)."""
    counts = dict.fromkeys(SOFIA_REG_STATES, 0)
    for reg in read_states(client, prefix).values():
        if reg.get("state") in counts:
            counts[reg["state"]] += 1
    return counts


def read_state(client: redis.Redis, prefix: str, gateway_id: uuid.UUID) -> dict[str, Any] | None:
    """One gateway's last registration state, None before sofia reported any."""
    raw = client.hget(registration_key(prefix), str(gateway_id))
    return json.loads(raw) if raw else None


def read_states(client: redis.Redis, prefix: str) -> dict[uuid.UUID, dict[str, Any]]:
    """Every known registration: gateway id -> {state, changedAt, sipStatus, phrase}."""
    out: dict[uuid.UUID, dict[str, Any]] = {}
    for raw_id, raw in client.hgetall(registration_key(prefix)).items():
        try:
            out[uuid.UUID(raw_id.decode() if isinstance(raw_id, bytes) else raw_id)] = json.loads(raw)
        except ValueError:
            continue
    return out
