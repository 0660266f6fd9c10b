"""The body of a call's first webhook request (SPEC "Outbound webhook"), built in one place so
the call session and ``sbc webhook try`` send exactly the same thing.

A leg the platform dialled is already answered when it reaches the application:
``direction: outbound`` with ``callStatus: in-progress``; an inbound call is ``ringing``.
"""
from __future__ import annotations

from typing import Any, Optional


def first_request_body(*, call_id: str, trace_id: str, account_id: str,
                       application_id: Optional[str], from_number: Optional[str],
                       to_number: Optional[str], direction: str) -> dict[str, Any]:
    return {
        "callId": call_id, "traceId": trace_id,
        "accountSid": account_id, "applicationSid": application_id,
        "from": from_number, "to": to_number, "direction": direction,
        "callStatus": "ringing" if direction == "inbound" else "in-progress",
    }
