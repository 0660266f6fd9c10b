"""A customer server that never answers, through the real switch: the caller is answered (the
app_json fallback plays) within the first-reply deadline (8 s by default), not after 3 × 10 s."""
from __future__ import annotations

from app import limits
from tests.plugins.webhook_server import Reply

SILENT = Reply(body=b"[]", delay=40.0)


def test_a_silent_webhook_gets_the_caller_answered_within_the_first_reply_deadline(tenant, sipp, hook_server):
    hook_server.reply(SILENT, SILENT, SILENT)
    number = tenant.number_for([{"verb": "say", "text": "We will be right back."}, {"verb": "hangup"}],
                               call_hook_url=hook_server.url("/silent"))
    result = sipp.call(number, trace_msg=True, timeout=60)
    assert result.ok, result.errors
    rang = result.final_response_seconds()
    print(f"\nreal switch: silent webhook, caller answered after {rang[0]:.2f}s "
          f"(deadline {limits.WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS}s)")
    assert len(rang) == 1 and rang[0] < limits.WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS + 2
    record = tenant.wait_record(number)[0]
    assert record["webhook_error"] == "webhook_failed:timeout" and record["answered_at"] is not None
