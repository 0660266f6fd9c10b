"""The agent channel's input guard (docs/agents.md "Envelope", "Rate limit", "Connecting"):
frames go through the REST bodies' strict decoder (app/api/json_body.py), commands are
limited per socket (a token bucket on an injected clock), and a refresh token is refused as
REST refuses it. Real WebSockets on gevent's pywsgi, real Postgres, Redis and RabbitMQ."""
from __future__ import annotations

import json
import logging

import pytest

from app import limits
from app.agent_channel import protocol
from app.agent_channel.server import CLOCK_EXTENSION


def _agent(seed, api, name: str = "ana"):
    tenant = seed.tenant()
    seed.user(tenant, name, agent=True)
    return tenant, api.mint(tenant, name, session="agent", role="agent")


def _errors_logged(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("reason", ["lunch\x00", "lunch\ud800"], ids=["nul", "lone-surrogate"])
def test_given_unstorable_text_in_a_command_field_then_validation_failed_naming_the_field_and_no_traceback(
        channel_server, seed, api, caplog, reason):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    # json.dumps escapes both as \u0000 / \ud800: valid JSON text that no database can store
    ack = client.command("setState", state="not_ready", reason=reason)
    assert ack["ok"] is False
    assert ack["error"]["code"] == "validation_failed"
    assert list(ack["error"]["details"]) == ["reason"]
    assert _errors_logged(caplog) == []
    assert client.command("setState", state="not_ready", reason="lunch")["reason"] == "lunch"  # socket stays


def test_given_unstorable_text_in_a_frame_without_an_id_then_an_error_message(channel_server, seed, api, caplog):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    client.send({"type": "setState", "state": "not_ready", "reason": "\x00"})
    assert client.expect("error")["code"] == "validation_failed"
    assert _errors_logged(caplog) == []


@pytest.mark.parametrize("frame, code", [
    ('{"type": "setState", "id": "1", "state": "not_ready", "reason": 1e999}', "number_out_of_range"),
    ('{"type": "mute", "id": "1", "n": 9223372036854775808}', "number_out_of_range"),
    ('{"type": "mute", "id": "1", "x": ' + "[" * 40 + "]" * 40 + "}", "json_too_deep"),
    ('{"type": "mute", "id": "1", "x": NaN}', "bad_message"),
])
def test_given_a_frame_the_strict_decoder_refuses_then_the_rest_code_and_the_socket_stays(
        channel_server, seed, api, caplog, frame, code):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    client.send(frame)
    answer = client.expect("ack") if code == "number_out_of_range" else client.expect("error")
    assert (answer["error"]["code"] if answer["type"] == "ack" else answer["code"]) == code
    assert _errors_logged(caplog) == []
    assert client.command("mute")["ok"] is True


@pytest.mark.parametrize("frame, code", [
    ("null", "bad_message"), ("true", "bad_message"), ('"setState"', "bad_message"),
    ('[{"type": "mute", "id": "1"}]', "bad_message"),
    ('"\\u0000"', "validation_failed"), ('["\\ud800"]', "validation_failed"),  # the decoder refuses first
])
def test_given_a_non_object_frame_then_an_error_and_the_socket_stays(channel_server, seed, api, caplog, frame, code):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    client.send(frame)
    assert client.expect("error")["code"] == code
    assert _errors_logged(caplog) == []
    assert client.command("mute")["ok"] is True


@pytest.mark.parametrize("frame", ['["auth"]', '{"type": "auth", "token": "\\u0000"}'])
def test_given_an_unusable_auth_frame_then_an_error_and_close_4003_without_a_traceback(
        channel_server, seed, caplog, frame):
    tenant = seed.tenant()
    client = channel_server().connect(tenant.host)
    client.send(frame)
    assert client.expect("error")["code"] in ("bad_message", "validation_failed")
    assert client.closed_with() == 4003
    assert _errors_logged(caplog) == []


def _refresh_token(api, tenant, username: str) -> str:
    from flask_jwt_extended import create_refresh_token

    user = tenant.users[username]
    with api.app.app_context():
        return create_refresh_token(identity=str(user.id), additional_claims={
            "acct": str(tenant.account_id), "tenant": tenant.subdomain, "session": "agent", "role": user.role})


def test_given_a_refresh_token_when_authenticating_then_refused_with_the_rest_code_and_close_4003(
        channel_server, seed, api):
    tenant, _ = _agent(seed, api)
    token = _refresh_token(api, tenant, "ana")
    rest = api.anonymous(tenant.host).with_token(token).put("/api/agents/me/state", json={"state": "available"})
    assert rest.status_code == 401
    client = channel_server().connect(tenant.host)
    client.send({"type": "auth", "token": token})
    assert client.expect("error")["code"] == rest.get_json()["code"] == "invalid_token"
    assert client.closed_with() == protocol.CLOSE_AUTH_FAILED


class FrozenClock:
    """The command bucket's clock: time moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _limited_server(channel_server, clock: FrozenClock):
    server = channel_server()
    server.app.extensions[CLOCK_EXTENSION] = clock
    return server


def _send_all(client, count: int, type_: str = "mute", **fields) -> list[str]:
    """Send ``count`` commands back to back; the ids in order."""
    ids = [f"c{n}" for n in range(count)]
    for command_id in ids:
        client.send({"type": type_, "id": command_id, **fields})
    return ids


def test_given_a_burst_over_the_bucket_then_exactly_the_burst_is_served_and_the_rest_rate_limited(
        channel_server, seed, api):
    clock = FrozenClock()
    tenant, token = _agent(seed, api)
    client = _limited_server(channel_server, clock).connect(tenant.host)
    client.auth(token)
    extra = limits.AGENT_CHANNEL_RATE_STRIKES - 1  # refused, but not enough to be closed
    ids = _send_all(client, limits.AGENT_CHANNEL_COMMAND_BURST + extra, "setState", state="not_ready")
    acks = [client.expect("ack", lambda m, i=i: m.get("id") == i) for i in ids]
    assert [a["ok"] for a in acks[:limits.AGENT_CHANNEL_COMMAND_BURST]] == [True] * limits.AGENT_CHANNEL_COMMAND_BURST
    assert [a["error"]["code"] for a in acks[limits.AGENT_CHANNEL_COMMAND_BURST:]] == ["rate_limited"] * extra
    # one second later the bucket has refilled by the documented rate, no more
    clock.now += 1.0
    ids = _send_all(client, int(limits.AGENT_CHANNEL_COMMANDS_PER_SECOND) + 1)
    acks = [client.expect("ack", lambda m, i=i: m.get("id") == i) for i in ids]
    assert [a["ok"] for a in acks] == [True] * int(limits.AGENT_CHANNEL_COMMANDS_PER_SECOND) + [False]


def test_given_a_client_that_keeps_flooding_then_it_is_closed_with_4029(channel_server, seed, api):
    clock = FrozenClock()
    tenant, token = _agent(seed, api)
    client = _limited_server(channel_server, clock).connect(tenant.host)
    client.auth(token)
    _send_all(client, 300, "setState", state="not_ready")  # the flood: 300 setState on one socket
    assert client.closed_with() == protocol.CLOSE_RATE_LIMITED == 4029
    acks = [m for m in client.seen if m.get("type") == "ack"]
    assert sum(1 for a in acks if a["ok"]) == limits.AGENT_CHANNEL_COMMAND_BURST
    assert sum(1 for a in acks if not a["ok"] and a["error"]["code"] == "rate_limited") \
        == limits.AGENT_CHANNEL_RATE_STRIKES
    assert json.dumps(acks)  # every answer was a well-formed message


def test_given_refused_commands_then_a_served_one_forgives_the_strikes(channel_server, seed, api):
    clock = FrozenClock()
    tenant, token = _agent(seed, api)
    client = _limited_server(channel_server, clock).connect(tenant.host)
    client.auth(token)
    for _round in range(3):  # 3 x (strikes - 1) refusals in all: more than the strikes, never in a row
        ids = _send_all(client, limits.AGENT_CHANNEL_COMMAND_BURST + limits.AGENT_CHANNEL_RATE_STRIKES - 1)
        for i in ids:
            client.expect("ack", lambda m, i=i: m.get("id") == i)
        clock.now += limits.AGENT_CHANNEL_COMMAND_BURST / limits.AGENT_CHANNEL_COMMANDS_PER_SECOND
    assert client.command("mute")["ok"] is True
