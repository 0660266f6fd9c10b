"""After the inbound connection to a FreeSWITCH comes back, make our view match its view.

A call this controller still thinks is live on that switch but which ``show channels`` no
longer lists ended while we were cut off: its outbound socket is closed, so the session
finishes now (call record from what it saw, limiter slot released) instead of waiting on a
socket that will never speak again.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from esl.outbound import OutboundConnection

log = logging.getLogger(__name__)


def close_vanished_calls(live_calls: Mapping[str, "OutboundConnection"], switch_ips: Iterable[str],
                         rows: list[dict]) -> list[str]:
    """Returns the call ids closed. ``switch_ips``: the addresses that switch connects from."""
    on_switch = {row.get("uuid") for row in rows}
    ips = set(switch_ips)
    vanished = [call_id for call_id, conn in list(live_calls.items())
                if conn.address and conn.address[0] in ips and call_id not in on_switch]
    for call_id in vanished:
        log.warning("call %s is gone from FreeSWITCH after a reconnect; closing its session", call_id)
        conn = live_calls.get(call_id)
        if conn is not None:
            conn.close()
    return vanished
