"""Status hook updates of one call reach the customer in order: ``in-progress`` before the final
status, even when the first delivery of ``in-progress`` has to be retried."""
from __future__ import annotations

import json
import uuid

import pytest

from app.calls.limiter import ConcurrencyLimiter
from app.voice.services import CallServices
from app.voice.session import CallSession
from app.webhooks.client import WebhookClient
from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.simulator import Call


@pytest.fixture
def slow_retry_controller(outbound_server, redis_client, redis_prefix):
    services = CallServices(
        limiter=ConcurrencyLimiter(redis_client, key_prefix=f"{redis_prefix}{uuid.uuid4().hex[:6]}:"),
        redis=redis_client,
        # the retry of a failed update comes long after this short call has ended
        webhooks=WebhookClient(allow_loopback=True, retry_delays=(1.0, 1.0)),
        recordings_dir="/var/spool/fs/rec", ws_vendor="saas-sbc", hangup_complete_timeout=5.0)
    return outbound_server(lambda conn: CallSession(conn, services).run())


def test_given_in_progress_update_retried_when_call_ends_then_final_status_is_delivered_after_it(
        slow_retry_controller, simulate_call, hook_server, number_with_app):
    hook_server.reply(Reply(status=500, body=b"busy"), Reply(status=204, body=b""))
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "Hi"}],
                                         call_status_hook_url=hook_server.url("/status"))

    call = simulate_call(Call(callee=number), slow_retry_controller)
    assert call.wait(10), "simulated call did not finish"
    # in-progress (failed), in-progress (retried), completed
    eventually(lambda: len(hook_server.requests) >= 3, what="three status hook requests")

    statuses = [json.loads(r.body)["callStatus"] for r in hook_server.requests]
    assert statuses == ["in-progress", "in-progress", "completed"]
