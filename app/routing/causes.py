"""Which failures of one carrier mean "try the next carrier" and which mean "the callee said no".

FreeSWITCH's ``bridge`` walks ``|``-separated endpoints in order and moves to the next one on
any failure unless the failure cause is listed in ``fail_on_single_reject`` (matched as a
case-insensitive substring of that list, see switch_ivr_originate.c). So we list the callee's
refusals there: retrying a busy or declining callee through another carrier only rings them
again (and bills twice), while network/carrier faults deserve another route.

SIP responses map to these causes in mod_sofia: 486/600 USER_BUSY, 603/403 CALL_REJECTED,
480 NO_USER_RESPONSE, 404 UNALLOCATED_NUMBER, 484 INVALID_NUMBER_FORMAT, 410 NUMBER_CHANGED;
503/500 NORMAL_TEMPORARY_FAILURE, 502 NETWORK_OUT_OF_ORDER, 408/504 RECOVERY_ON_TIMER_EXPIRE,
485/604 NO_ROUTE_DESTINATION, 488 INCOMPATIBLE_DESTINATION; a sofia gateway whose OPTIONS
ping failed yields GATEWAY_DOWN without sending an INVITE.

Decisions (documented in docs/trunks.md):
- NO_ROUTE_DESTINATION fails over: carriers answer 485/604 when *they* have no route for the
  prefix, which another carrier may have.
- UNALLOCATED_NUMBER (404) stops: the number does not exist; another carrier will say the same.
- CALL_REJECTED stops even though some carriers send 403 for account problems: FreeSWITCH
  cannot tell 403 from 603 in the cause, and ringing a declining callee twice is worse.
- NO_ANSWER stops: the ring timeout elapsed on a ringing callee. FreeSWITCH already stops the
  whole bridge on the timeout unless ``originate_continue_on_timeout`` is set, which we don't.
"""
from __future__ import annotations

# Callee refusals: stop the whole bridge (goes into fail_on_single_reject).
STOP_CAUSES: tuple[str, ...] = (
    "USER_BUSY",
    "CALL_REJECTED",
    "NO_ANSWER",
    "NO_USER_RESPONSE",
    "UNALLOCATED_NUMBER",
    "INVALID_NUMBER_FORMAT",
    "NUMBER_CHANGED",
    "ORIGINATOR_CANCEL",
)

# Carrier/network faults: the next carrier in the route is tried.
FAILOVER_CAUSES: tuple[str, ...] = (
    "NORMAL_TEMPORARY_FAILURE",
    "DESTINATION_OUT_OF_ORDER",
    "NETWORK_OUT_OF_ORDER",
    "RECOVERY_ON_TIMER_EXPIRE",
    "NO_ROUTE_DESTINATION",
    "GATEWAY_DOWN",
    "SWITCH_CONGESTION",
    "NORMAL_CIRCUIT_CONGESTION",
    "SERVICE_UNAVAILABLE",
    "INCOMPATIBLE_DESTINATION",
    "BEARERCAPABILITY_NOTAVAIL",
    "FACILITY_REJECTED",
    "NO_ROUTE_TRANSIT_NET",
    "EXCHANGE_ROUTING_ERROR",
    "MANDATORY_IE_MISSING",
    "PROTOCOL_ERROR",
    "INTERWORKING",
)

# SIP status codes a carrier may send, and which class they fall in (for explain output and
# the call record; FreeSWITCH itself decides on the mapped cause above).
FAILOVER_SIP_CODES: frozenset[int] = frozenset({408, 485, 488, 500, 502, 503, 504, 604})
STOP_SIP_CODES: frozenset[int] = frozenset({403, 404, 410, 480, 484, 486, 487, 600, 603})


def fail_on_single_reject_value() -> str:
    """The ``fail_on_single_reject`` channel variable value (comma-separated cause names)."""
    return ",".join(STOP_CAUSES)


def should_fail_over(cause: str) -> bool:
    """What FreeSWITCH will do for ``cause`` given our variable: mirrors its substring test,
    so an unknown cause (not in STOP_CAUSES) also fails over, exactly like the switch does."""
    return cause.strip().upper() not in fail_on_single_reject_value().upper()
