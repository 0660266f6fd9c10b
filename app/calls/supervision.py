"""Supervisor listen / whisper / barge on an agent's live call: the shared vocabulary.

Three parties use it:
- the call session marks the call's **agent leg** in Redis when an agent's phone is bridged
  (queue offer answered, ``dial`` to a directory user answered, a callback's agent connected)
  and clears it when the bridge ends (``mark_agent_leg`` / ``clear_agent_leg``);
- the API (``POST /api/calls/:callId/supervise``) reads that mark to decide 404 / 409, keeps
  one supervision record per (call, supervisor) and publishes a ``call.supervise`` command;
- the controller (app/voice/supervisor.py) executes the command on the switch that holds the call.

FreeSWITCH mapping (mod_dptools ``eavesdrop``, switch_ivr_eavesdrop_session, 1.10.12): the
supervisor's phone is originated into ``eavesdrop(<callId>)``: a media bug on the *call's own
leg* (the caller or callback customer; the agent is the other side of its bridge). The bug's
flags decide who hears the supervisor:

| mode    | flags             | set by                         | heard by           | eavesdrop-command |
|---------|-------------------|--------------------------------|--------------------|-------------------|
| listen  | none              | (default)                      | nobody             | ``0``             |
| whisper | ``ED_MUX_READ``   | ``eavesdrop_whisper_aleg=true`` | the agent only     | ``1``             |
| barge   | both MUX flags    | both ``eavesdrop_whisper_*``   | agent and customer | ``3``             |

``ED_MUX_READ`` mixes the supervisor into what the switch *reads* from the customer's leg,
which is what the bridge sends to the agent; ``ED_MUX_WRITE`` into what it writes to the
customer. A mode change is the ``eavesdrop-command`` header of an event queued on the
supervisor's session (``sendevent`` with its ``Unique-ID``): eavesdrop's loop reads it whether
or not DTMF commands are enabled. DTMF commands are disabled (``eavesdrop_enable_dtmf=false``):
the supervisor's keypad cannot change a mode behind the API's back (the events would lie).
"""
from __future__ import annotations

import json
import logging
import math
import time
import uuid
from dataclasses import dataclass
from typing import Any, Optional

import redis

from app import limits
from app.redis_pool import as_text

log = logging.getLogger(__name__)

LISTEN, WHISPER, BARGE = "listen", "whisper", "barge"
MODES: tuple[str, ...] = (LISTEN, WHISPER, BARGE)

# mode -> (eavesdrop_whisper_aleg, eavesdrop_whisper_bleg, eavesdrop-command)
_EAVESDROP = {LISTEN: ("false", "false", "0"), WHISPER: ("true", "false", "1"),
              BARGE: ("true", "true", "3")}

START, MODE, STOP = "start", "mode", "stop"
ACTIONS: tuple[str, ...] = (START, MODE, STOP)

DIALING, ACTIVE = "dialing", "active"

SUPERVISION_VARIABLE = "sbc_supervision_id"   # on the supervisor's leg


def eavesdrop_variables(mode: str) -> dict[str, str]:
    """Channel variables of the supervisor's leg for ``mode`` (read when eavesdrop starts)."""
    aleg, bleg, _ = _EAVESDROP[mode]
    return {"eavesdrop_enable_dtmf": "false", "eavesdrop_whisper_aleg": aleg,
            "eavesdrop_whisper_bleg": bleg}


def eavesdrop_command(mode: str) -> str:
    """The ``eavesdrop-command`` value that switches a running eavesdrop to ``mode``."""
    return _EAVESDROP[mode][2]


# -- the agent leg of a live call ------------------------------------------------------------
def agent_leg_key(prefix: str, call_id: str) -> str:
    return f"{prefix}agent-leg:{call_id}"


@dataclass(frozen=True)
class AgentLeg:
    call_id: str
    account_id: str
    agent_id: str
    leg: str            # the agent's channel uuid (the other side of the bridge)
    switch: str         # Core-UUID of the call's FreeSWITCH
    since: float
    trace_id: str = ""


def mark_agent_leg(client: redis.Redis, prefix: str, *, call_id: str, account_id: str,
                   agent_id: Optional[str], leg: str, switch: str, trace_id: str = "") -> None:
    """The call is bridged to an agent's phone: it can be supervised from now on."""
    key = agent_leg_key(prefix, call_id)
    pipe = client.pipeline(transaction=False)
    pipe.hset(key, mapping={"account": account_id, "agent": agent_id or "", "leg": leg or "",
                            "switch": switch or "", "trace": trace_id or "",
                            "since": f"{time.time():.3f}"})
    pipe.expire(key, limits.CALL_STATE_TTL_SECONDS)
    pipe.execute()


def clear_agent_leg(client: redis.Redis, prefix: str, call_id: str) -> None:
    client.delete(agent_leg_key(prefix, call_id))


def note_agent_bridged(client: redis.Redis, prefix: str, *, call_id: str, account_id: str,
                       agent_id: Optional[str], event: Any, switch: str, trace_id: str) -> None:
    """The call's leg is bridged to an agent's phone (``event``: its CHANNEL_BRIDGE). A Redis
    fault never touches the call: the call just cannot be supervised."""
    other = ""
    if event is not None:
        other = event.get("Other-Leg-Unique-ID") or event.get("Bridge-B-Unique-ID") or ""
    try:
        mark_agent_leg(client, prefix, call_id=call_id, account_id=account_id, agent_id=agent_id,
                       leg=other, switch=switch, trace_id=trace_id)
    except Exception:  # redis.RedisError or a broken client
        log.warning("call %s: agent leg not marked (cannot be supervised)", call_id, exc_info=True)


def note_agent_unbridged(client: redis.Redis, prefix: str, call_id: str) -> None:
    """The agent's bridge ended: the call can no longer be supervised."""
    try:
        clear_agent_leg(client, prefix, call_id)
    except Exception:  # the mark expires with its TTL
        log.warning("call %s: agent leg mark not cleared", call_id, exc_info=True)


def read_agent_leg(client: redis.Redis, prefix: str, call_id: str) -> Optional[AgentLeg]:
    """The call's agent leg, or None when there is no mark or the mark is unreadable (not
    UTF-8, a ``since`` that is not a finite number): a mark the API cannot read says nothing
    it could act on, so it counts as no mark (never a 500 on ``POST …/supervise``)."""
    raw = client.hgetall(agent_leg_key(prefix, call_id))
    if not raw:
        return None
    try:
        v = {as_text(k): as_text(val) for k, val in raw.items()}
        since = float(v.get("since") or 0)
    except (UnicodeDecodeError, ValueError):
        log.warning("call %s: agent leg mark unreadable, taken as no mark", call_id)
        return None
    if not math.isfinite(since):
        log.warning("call %s: agent leg mark unreadable, taken as no mark", call_id)
        return None
    return AgentLeg(call_id=str(call_id), account_id=v.get("account", ""), agent_id=v.get("agent", ""),
                    leg=v.get("leg", ""), switch=v.get("switch", ""), since=since,
                    trace_id=v.get("trace", ""))


# -- one supervision: a supervisor's leg on one call ------------------------------------------
def supervision_key(prefix: str, call_id: str, supervisor_id: str) -> str:
    return f"{prefix}supervision:{call_id}:{supervisor_id}"


@dataclass(frozen=True)
class Supervision:
    id: str               # also the supervisor leg's channel uuid
    call_id: str
    account_id: str
    supervisor_id: str    # the user who supervises
    agent_id: str
    mode: str
    state: str            # dialing | active
    endpoint: str         # what was dialled for the supervisor (user/<sip user>)
    started: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "call_id": self.call_id, "account_id": self.account_id,
                "supervisor_id": self.supervisor_id, "agent_id": self.agent_id, "mode": self.mode,
                "state": self.state, "endpoint": self.endpoint, "started": self.started}


def save_supervision(client: redis.Redis, prefix: str, supervision: Supervision) -> None:
    key = supervision_key(prefix, supervision.call_id, supervision.supervisor_id)
    client.set(key, json.dumps(supervision.as_dict()), ex=limits.CALL_STATE_TTL_SECONDS)


def claim_supervision(client: redis.Redis, prefix: str, supervision: Supervision) -> bool:
    """Store a new supervision unless this supervisor already supervises the call (atomic:
    two clicks never ring the supervisor twice)."""
    key = supervision_key(prefix, supervision.call_id, supervision.supervisor_id)
    return bool(client.set(key, json.dumps(supervision.as_dict()), nx=True,
                           ex=limits.CALL_STATE_TTL_SECONDS))


def read_supervision(client: redis.Redis, prefix: str, call_id: str,
                     supervisor_id: str) -> Optional[Supervision]:
    raw = client.get(supervision_key(prefix, call_id, supervisor_id))
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return Supervision(**{k: data[k] for k in Supervision.__dataclass_fields__})
    except (ValueError, KeyError, TypeError):
        return None


def drop_supervision(client: redis.Redis, prefix: str, call_id: str, supervisor_id: str,
                     supervision_id: Optional[str] = None) -> None:
    """Forget the supervision (only this one when ``supervision_id`` is given: a newer one of
    the same supervisor on the same call is left alone)."""
    key = supervision_key(prefix, call_id, supervisor_id)
    if supervision_id is None:
        client.delete(key)
        return
    current = read_supervision(client, prefix, call_id, supervisor_id)
    if current is not None and current.id == supervision_id:
        client.delete(key)


def new_supervision_id() -> str:
    return str(uuid.uuid4())
