"""Make our view of a FreeSWITCH's calls match what that switch can still do for them.

Two moments need it. After the inbound connection comes back, a call this controller still
thinks is live on that switch but which ``show channels`` no longer lists ended while we were
cut off. When the node watchdog (``app.voice.watchdog``) declares a switch frozen, none of its calls
will hear from it again. Either way the call's outbound socket is closed, so its session
finishes now (``call.failed`` ``connection_lost``, call record from what it saw, limiter slot
released) instead of waiting on a socket that will never speak again.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Container, Iterable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from esl.outbound import OutboundConnection

log = logging.getLogger(__name__)


def close_calls_from(live_calls: Mapping[str, "OutboundConnection"], switch_ips: Iterable[str], *,
                     keep: Container[str] = frozenset(), why: str = "its FreeSWITCH froze") -> list[str]:
    """Close the sockets of the live calls that switch connected from, except ``keep``.

    Returns the call ids closed. ``switch_ips``: the addresses that switch connects from.
    """
    ips = set(switch_ips)
    doomed = [call_id for call_id, conn in list(live_calls.items())
              if conn.address and conn.address[0] in ips and call_id not in keep]
    for call_id in doomed:
        log.warning("call %s: %s; closing its session", call_id, why)
        conn = live_calls.get(call_id)
        if conn is not None:
            conn.close()
    return doomed


def close_vanished_calls(live_calls: Mapping[str, "OutboundConnection"], switch_ips: Iterable[str],
                         rows: list[dict]) -> list[str]:
    """After a reconnect: close the calls ``show channels`` (``rows``) no longer lists."""
    return close_calls_from(live_calls, switch_ips, keep={row.get("uuid") for row in rows},
                            why="gone from FreeSWITCH after a reconnect")
