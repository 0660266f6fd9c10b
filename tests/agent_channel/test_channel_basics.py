"""The agent channel's handshake, state, takeover and robustness (docs/agents.md "The agent
channel"), over real WebSockets on gevent's pywsgi."""
from __future__ import annotations

import contextlib
import socket

import pytest
import websocket

from app import limits
from tests.agent_channel.client import CHANNEL


def _agent(seed, api, name: str = "ana"):
    tenant = seed.tenant()
    seed.user(tenant, name, agent=True)
    return tenant, api.mint(tenant, name, session="agent", role="agent")


def test_given_a_valid_agent_token_when_authenticating_then_connection_and_current_state_arrive(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    hello = client.auth(token)
    assert hello["state"] == "open" and hello["agentId"] and hello["sessionId"] and hello["at"]
    state = client.expect("state")
    assert state["state"] == "offline"


@pytest.mark.parametrize("bad", ["not-a-jwt", "expired", "other-tenant", "no-agent"])
def test_given_a_bad_token_when_authenticating_then_error_and_close_4003(channel_server, seed, api, bad):
    tenant, token = _agent(seed, api)
    expected = {"not-a-jwt": "invalid_token", "expired": "token_expired",
                "other-tenant": "tenant_mismatch", "no-agent": "not_an_agent"}[bad]
    if bad == "expired":
        token = api.mint(tenant, "ana", session="agent", lifetime_seconds=-10)
    elif bad == "not-a-jwt":
        token = "not-a-jwt"
    elif bad == "other-tenant":
        token = api.mint(seed.tenant(), "admin")
    elif bad == "no-agent":
        token = api.mint(tenant, "admin")
    client = channel_server().connect(tenant.host)
    client.send({"type": "auth", "token": token})
    assert client.expect("error")["code"] == expected
    assert client.closed_with() == 4003


def test_given_an_account_without_queue_mgmt_when_authenticating_then_license_required(channel_server, seed, api):
    tenant = seed.tenant(licenses=["api-access"])
    seed.user(tenant, "bo", agent=True)
    client = channel_server().connect(tenant.host)
    client.send({"type": "auth", "token": api.mint(tenant, "bo", session="agent")})
    assert client.expect("error")["code"] == "license_required"
    assert client.closed_with() == 4003


def test_given_no_auth_message_when_the_timeout_passes_then_auth_timeout_and_close_4008(channel_server, seed):
    tenant = seed.tenant()
    client = channel_server().connect(tenant.host)
    assert client.expect("error", timeout=limits.AGENT_CHANNEL_AUTH_TIMEOUT_SECONDS + 10)["code"] == "auth_timeout"
    assert client.closed_with() == 4008


def test_given_a_first_message_that_is_not_auth_then_auth_required(channel_server, seed):
    tenant = seed.tenant()
    client = channel_server().connect(tenant.host)
    client.send({"type": "setState", "id": "1", "state": "available"})
    assert client.expect("error")["code"] == "auth_required"
    assert client.closed_with() == 4003


def test_given_a_plain_get_on_the_channel_path_then_400_websocket_required(api, seed):
    tenant = seed.tenant()
    response = api.anonymous(tenant.host).get(CHANNEL)
    assert response.status_code == 400 and response.get_json()["code"] == "websocket_required"


def test_given_set_state_when_sent_then_ack_and_a_state_push_from_the_bus(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    client.expect("state")
    ack = client.command("setState", state="not_ready", reason="lunch")
    assert ack["ok"] is True and ack["state"] == "not_ready" and ack["reason"] == "lunch"
    pushed = client.expect("state", lambda m: m["state"] == "not_ready")
    assert pushed["reason"] == "lunch" and pushed["previousState"] == "offline"
    bad = client.command("setState", state="busy")
    assert bad["ok"] is False and bad["error"]["code"] == "validation_failed"


def test_given_a_state_change_over_rest_then_the_open_socket_gets_it(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    admin = api.login(tenant)
    agent_id = admin.get("/api/agents").get_json()["items"][0]["id"]
    assert admin.put(f"/api/agents/{agent_id}/state", json={"state": "available"}).status_code == 200
    assert client.expect("state", lambda m: m["state"] == "available")["previousState"] == "offline"


def test_given_a_second_login_on_the_same_server_then_the_first_gets_takeover_and_4001(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    server = channel_server()
    first = server.connect(tenant.host)
    first.auth(token)
    second = server.connect(tenant.host)
    second.auth(token)
    first.expect("takeover")
    assert first.closed_with() == 4001
    assert second.command("setState", state="available")["ok"] is True


def test_given_a_second_login_on_another_api_process_then_the_first_is_taken_over(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    first = channel_server().connect(tenant.host)
    first.auth(token)
    second = channel_server().connect(tenant.host)
    second.auth(token)
    first.expect("takeover")
    assert first.closed_with() == 4001
    second.command("setState", state="available")
    assert second.expect("state", lambda m: m["state"] == "available")


def test_given_an_unknown_command_then_ack_unknown_command_and_the_socket_stays(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    ack = client.command("__class__")
    assert ack["ok"] is False and ack["error"]["code"] == "unknown_command"
    client.send({"type": "fly"})
    assert client.expect("error")["code"] == "unknown_command"
    assert client.command("mute")["ok"] is True


@pytest.mark.parametrize("frame", ["{", "[]", "42", '{"type": 1}', '{"type": "mute", "id": 7}', b"\x00\xff"])
def test_given_a_garbage_frame_then_error_bad_message_and_the_socket_stays(channel_server, seed, api, frame):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    if isinstance(frame, bytes):
        client.ws.send_binary(frame)
    else:
        client.send(frame)
    assert client.expect("error")["code"] == "bad_message"
    assert client.command("unmute")["ok"] is True


def test_given_broken_websocket_bytes_then_the_server_keeps_serving(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    server = channel_server()
    client = server.connect(tenant.host)
    client.auth(token)
    client.ws.sock.sendall(b"\xff\xff\xff\xff garbage that is no websocket frame" * 10)
    raw = socket.create_connection(("127.0.0.1", server.port))
    raw.sendall(b"GET " + CHANNEL.encode() + b" HTTP/1.1\r\nHost: " + tenant.host.encode()
                + b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    raw.recv(4096)
    raw.close()
    other = server.connect(tenant.host)
    other.auth(token)
    assert other.command("mute")["ok"] is True


def test_given_an_oversized_frame_then_the_socket_is_closed_1009(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    client.send("x" * (limits.AGENT_CHANNEL_MAX_MESSAGE_BYTES + 10))
    # the server may drop the socket before its close frame is read: closed either way
    with contextlib.suppress(websocket.WebSocketConnectionClosedException, ConnectionError):
        assert client.closed_with() in (1009, None)


def test_given_an_upgrade_without_a_websocket_key_then_400_and_the_server_keeps_serving(channel_server, seed, api):
    tenant, token = _agent(seed, api)
    server = channel_server()
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    raw.sendall(b"GET " + CHANNEL.encode() + b" HTTP/1.1\r\nHost: " + tenant.host.encode()
                + b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n")
    assert raw.recv(4096).startswith(b"HTTP/1.1 400")
    raw.close()
    client = server.connect(tenant.host)
    client.auth(token)
    assert client.command("mute")["ok"] is True


def test_given_a_host_without_a_tenant_then_the_upgrade_is_refused_400(channel_server):
    server = channel_server()
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    raw.sendall(b"GET " + CHANNEL.encode() + b" HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    reply = raw.recv(4096)
    raw.close()
    assert reply.startswith(b"HTTP/1.1 400") and b"tenant_required" in reply


def test_given_a_user_deactivated_after_login_then_the_next_command_is_refused_and_the_socket_closed_4003(
        channel_server, seed, api, owner_engine):
    from sqlalchemy import text

    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    assert client.command("mute")["ok"] is True
    with owner_engine.begin() as conn:
        conn.execute(text("UPDATE users SET is_active = false WHERE id = :u"), {"u": tenant.users["ana"].id})
    client.send({"type": "unmute", "id": "x"})
    assert client.expect("error")["code"] == "invalid_token"
    assert client.closed_with() == 4003


def test_given_a_quiet_socket_when_the_account_loses_its_license_then_it_is_closed_4003_without_a_command(
        channel_server, seed, api, monkeypatch):
    from app.agent_channel import server as channel_module

    monkeypatch.setattr(channel_module, "COMMAND_WAIT_SECONDS", 0.5)
    tenant, token = _agent(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(token)
    seed.set_licenses(tenant, ["api-access"])
    assert client.expect("error")["code"] == "license_required"
    assert client.closed_with() == 4003
