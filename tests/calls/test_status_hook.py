"""The call status hook: body shape, signed delivery to a real local HTTP server, never blocking."""
from __future__ import annotations

import json
import uuid

import gevent
import pytest

from app.calls.records import CallContext, write_call_record
from app.calls.status_hook import base_body, final_body, send_status
from app.webhooks import WebhookClient
from app.webhooks.signing import verify
from tests.calls.captures import as_new_leg, hangup_events
from tests.plugins.webhook_server import Reply


def client(**kw) -> WebhookClient:
    kw.setdefault("allow_loopback", True)
    return WebhookClient(**kw)


def test_given_written_record_when_final_status_posted_then_signed_body_describes_the_outcome(
        make_account, hook_server):
    account = make_account()
    (event,) = hangup_events("outbound_answer_playback_hangup")
    event = as_new_leg(event)
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), application_id=uuid.uuid4(),
                      from_number="+1 (555) 123-4567", to_number="15557654321", direction="inbound",
                      tags={"order": "42"}, hangup_reason="done")
    written = write_call_record(event, ctx)
    hook_server.reply(Reply(status=204, body=b""))
    job = send_status(hook_server.url("/status"), final_body(written, ctx), secret="whsec_test",
                      client=client())
    assert job.get(timeout=10) is True
    (req,) = hook_server.requests
    assert req.method == "POST" and req.path == "/status"
    assert verify(req.body, "whsec_test", req.headers["x-signature"])
    body = json.loads(req.body)
    assert body == {
        "callId": event["Unique-ID"],
        "traceId": str(ctx.trace_id),
        "accountSid": str(account.id),
        "applicationSid": str(ctx.application_id),
        "from": "15551234567",
        "to": "15557654321",
        "direction": "inbound",
        "callStatus": "completed",
        "callRecordSid": str(written.public_id),
        "duration": 2,          # 1580 ms, rounded up
        "talkDuration": 2,      # 1060 ms, rounded up
        "hangupCause": "NORMAL_CLEARING",
        "sipStatus": None,      # FreeSWITCH sent the BYE itself: no final response status
        "hangupReason": "done",
        "startTime": "2026-11-21T07:36:03.758Z",
        "answerTime": "2026-11-21T07:36:04.278Z",
        "endTime": "2026-11-21T07:36:05.338Z",
        "tags": {"order": "42"},
    }


def test_given_slow_failing_server_when_sending_then_caller_is_not_blocked_and_nothing_raises(hook_server):
    hook_server.reply(Reply(status=500, body=b"no", delay=0.3))
    ctx = CallContext(account_id=uuid.uuid4(), trace_id=uuid.uuid4(), from_number="1", to_number="2")
    started = gevent.get_hub().loop.now()
    job = send_status(hook_server.url("/status"), base_body(ctx, "c1", "in-progress"),
                      client=client(retry_delays=(0.0, 0.0)))
    assert gevent.get_hub().loop.now() - started < 0.1   # returned before any HTTP happened
    assert job.get(timeout=10) is False
    assert len(hook_server.requests) == 3   # the client's retry policy, then given up quietly


def test_given_no_status_hook_url_then_nothing_is_sent():
    ctx = CallContext(account_id=uuid.uuid4(), trace_id=uuid.uuid4())
    assert send_status(None, base_body(ctx, "c1", "ringing")) is None


def test_given_unknown_call_status_then_value_error():
    ctx = CallContext(account_id=uuid.uuid4(), trace_id=uuid.uuid4())
    with pytest.raises(ValueError):
        base_body(ctx, "c1", "exploded")
