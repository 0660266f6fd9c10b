"""``sbc webhook try URL``: the exact first request of a call (SPEC fields, test callId, signed)
reaches the developer's server, and the reply is judged by the controller's own parser and
printed step by step — before any phone rings."""
from __future__ import annotations

import json
import uuid

from click.testing import CliRunner

from app.cli.webhook import webhook
from app.webhooks.signing import verify
from tests.plugins.webhook_server import Reply

SPEC_FIRST_REQUEST_FIELDS = {"callId", "traceId", "accountSid", "applicationSid", "from", "to",
                             "direction", "callStatus"}
SECRET = "a-signing-secret-of-some-length"


def _try(*args: str):
    return CliRunner().invoke(webhook, ["try", *args], catch_exceptions=False)


def test_given_a_server_when_trying_then_it_gets_the_signed_first_request_with_every_spec_field(hook_server):
    hook_server.reply(Reply.json([{"verb": "say", "text": "Hello"}]))
    result = _try(hook_server.url("/hook"), "--secret", SECRET, "--from", "15551230000", "--to", "15557650000")
    assert result.exit_code == 0, result.output
    (request,) = hook_server.requests
    assert request.method == "POST" and request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith("SaaS-SBC/")
    assert verify(request.body, SECRET, request.headers["x-signature"])
    body = json.loads(request.body)
    assert set(body) == SPEC_FIRST_REQUEST_FIELDS
    uuid.UUID(body["callId"])
    assert (body["from"], body["to"], body["direction"], body["callStatus"]) == \
        ("15551230000", "15557650000", "inbound", "ringing")


def test_given_an_outbound_try_then_call_status_is_in_progress(hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    assert _try(hook_server.url("/hook"), "--direction", "outbound").exit_code == 0
    assert json.loads(hook_server.requests[0].body)["callStatus"] == "in-progress"


def test_given_a_valid_reply_when_trying_then_the_steps_are_printed_in_order(hook_server):
    hook_server.reply(Reply.json([
        {"verb": "say", "text": "Welcome", "voice": "woman"},
        {"verb": "gather", "numDigits": 1, "say": {"text": "Press 1"}, "actionHook": "https://example.com/menu"},
        {"verb": "hangup"},
    ]))
    result = _try(hook_server.url("/hook"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    steps = [line.strip() for line in lines[lines.index("accepted; the call would:") + 1:]]
    assert steps[0] == "1. say: speak 'Welcome' with voice slt"
    assert steps[1].startswith("2. gather: collect dtmf while speaking 'Press 1', then POST the result to https://example.com/menu")
    assert steps[2] == "3. hangup: hang up"


def test_given_an_invalid_reply_when_trying_then_exit_1_with_the_validators_errors(hook_server):
    hook_server.reply(Reply.json([{"verb": "say"}, {"verb": "dance"}]))
    result = _try(hook_server.url("/hook"))
    assert result.exit_code == 1
    assert "rejected: 2 error(s)" in result.output
    assert "#0 say text" in result.output and "#1" in result.output


def test_given_a_server_error_when_trying_then_exit_2_and_the_failure_is_named(hook_server):
    hook_server.reply(Reply(status=500, body=b"boom"))
    result = _try(hook_server.url("/hook"))
    assert result.exit_code == 2
    assert "failed:" in result.output and "apology" in result.output


def test_given_a_private_address_when_trying_then_refused_like_the_platform_would(hook_server):
    result = _try("https://10.0.0.1/hook")
    assert result.exit_code == 2 and "failed:" in result.output
    assert hook_server.requests == []


def test_given_a_loopback_url_without_the_development_mode_then_the_refusal_is_said_once_with_the_setting_to_use(
        monkeypatch):
    from app.settings import get_settings

    monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "0")
    get_settings.cache_clear()
    try:
        result = _try("http://127.0.0.1:8099/hook")
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    assert result.exit_code == 2
    failure = result.output[result.output.index("failed:"):]
    assert failure.count("unsafe_destination") == 1 and failure.count("(loopback)") == 1
    assert "hint: " in failure and "SBC_ALLOW_LOOPBACK_WEBHOOKS=1" in failure


def test_given_a_private_address_then_no_loopback_hint():
    result = _try("https://10.0.0.1/hook")
    assert result.exit_code == 2 and "unsafe_destination" in result.output
    assert "SBC_ALLOW_LOOPBACK_WEBHOOKS" not in result.output
