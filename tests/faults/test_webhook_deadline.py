"""A customer server that never answers must not keep the caller ringing past the first-reply
deadline: the apology (or the app_json fallback) plays within it. Real HTTP server that stalls,
the call path through the FreeSWITCH simulator, real PostgreSQL/Redis."""
from __future__ import annotations

import pytest

from app.config import RuntimeConfig
from app.voice.call_handlers import APOLOGY
from app.webhooks.client import WebhookClient
from app.webhooks.errors import Reason, WebhookFailed
from app.webhooks.transport import AttemptError, PinnedTransport
from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, outbox_keys
from tests.simulator import Call

SILENT = Reply(body=b"[]", delay=30.0)


class ManualClock:
    """The client's clock, moved by the transport (an attempt's time) and the client's sleep."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ClockedTransport(PinnedTransport):
    """The real transport to the real server, recording each attempt's timeout and moving the
    client's clock by the time the attempt took: its timeout when it timed out, else the
    server's known reply delay."""

    def __init__(self, clock: ManualClock, reply_seconds: float) -> None:
        super().__init__()
        self.clock, self.reply_seconds = clock, reply_seconds
        self.timeouts: list[float] = []

    def request(self, dest, method, target, headers, body, *, timeout, max_bytes):
        self.timeouts.append(timeout)
        try:
            response = super().request(dest, method, target, headers, body, timeout=timeout,
                                       max_bytes=max_bytes)
        except AttemptError as exc:
            self.clock.now += timeout if exc.reason == Reason.TIMEOUT else self.reply_seconds
            raise
        self.clock.now += self.reply_seconds
        return response


def _client(reply_seconds: float, **kwargs) -> tuple[WebhookClient, ClockedTransport, ManualClock]:
    clock = ManualClock()
    transport = ClockedTransport(clock, reply_seconds)

    def sleep(seconds: float) -> None:  # a retry's pause passes on the client's clock only
        clock.now += seconds

    return WebhookClient(allow_loopback=True, transport=transport, sleep=sleep, clock=clock,
                         **kwargs), transport, clock


def test_given_a_silent_server_when_fetching_with_a_deadline_then_all_attempts_end_within_it(hook_server):
    hook_server.reply(SILENT, SILENT, SILENT)
    client, transport, clock = _client(SILENT.delay, timeout=10.0)
    started = clock()
    with pytest.raises(WebhookFailed) as failed:
        client.fetch_instructions(hook_server.url("/hook"), "POST", {}, deadline_seconds=1.5)
    assert failed.value.reason == "timeout" and failed.value.attempts == 1
    assert transport.timeouts == [1.5]  # the attempt's timeout is cut to the deadline, not 10 s
    assert clock() - started == 1.5
    assert len(hook_server.requests) == 1


def test_given_a_failing_server_when_fetching_with_a_deadline_then_no_retry_starts_after_it(hook_server):
    slow_error = Reply(body=b"down", status=503, delay=0.6)
    hook_server.reply(slow_error, slow_error, slow_error)
    client, transport, clock = _client(slow_error.delay, retry_delays=(0.5, 1.0))
    with pytest.raises(WebhookFailed) as failed:
        client.fetch_instructions(hook_server.url("/hook"), "POST", {}, deadline_seconds=1.5)
    # attempt 1 (0.6 s) + 0.5 s pause + attempt 2 cut at 1.5 s; attempt 3 never starts
    assert failed.value.attempts == 2 and failed.value.reason == "timeout"
    assert transport.timeouts == pytest.approx([1.5, 0.4])
    assert len(hook_server.requests) == 2


def test_given_a_webhook_that_never_answers_when_a_call_arrives_then_the_apology_plays_within_the_deadline(
        controller, simulate_call, hook_server, number_with_app, owner_conn, services):
    services.first_reply_deadline = 1.0
    hook_server.reply(SILENT, SILENT, SILENT)
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(15)
    speak = next(c for c in call.commands if c.app == "speak")
    waited = speak.at - call.connected_at
    print(f"\nsilent webhook: caller hears the apology {waited:.2f}s after the call reached us")
    assert APOLOGY in speak.app_arg
    assert waited < 2.0, "the caller was kept waiting past the deadline"
    assert len(hook_server.requests) == 1  # no retry started past the deadline
    assert ("uuid_answer", "") in call.actions(), "answered to play the apology"
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "webhook_failed:timeout"
    assert "call.failed" in outbox_keys(owner_conn, record["trace_id"])


def test_given_no_stored_deadline_then_the_default_is_well_under_thirty_seconds_and_can_be_changed():
    assert RuntimeConfig({}).webhook_first_reply_deadline_seconds == 8
    assert RuntimeConfig({"webhook.first_reply_deadline_seconds": 5}).webhook_first_reply_deadline_seconds == 5
    assert RuntimeConfig({"webhook.first_reply_deadline_seconds": 600}).webhook_first_reply_deadline_seconds == 8


def test_given_a_websocket_app_that_never_acks_when_a_call_arrives_then_the_apology_plays_within_the_deadline(
        controller, simulate_call, ws_server, number_with_app, owner_conn, services):
    services.first_reply_deadline = 1.0
    ws_server.on_message = lambda peer, message: None  # session:new is never acknowledged
    account, number, _ = number_with_app(call_hook_url=ws_server.url())

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(15)
    speak = next(c for c in call.commands if c.app == "speak")
    assert APOLOGY in speak.app_arg and speak.at - call.connected_at < 2.0
    assert call_record(owner_conn, call.uuid)["webhook_error"] == "webhook_failed:timeout"
