"""The agent channel honours revoked sessions (docs/api.md "Sessions and revocation"): a
logged-out token cannot open it, and an open socket whose user was signed out everywhere is
closed at its next identity check."""
from __future__ import annotations


def _agent_session(seed, api):
    tenant = seed.tenant()
    seed.user(tenant, "ana", agent=True)
    return tenant, api.login(tenant, "ana", session="agent")


def test_given_a_logged_out_token_when_opening_the_channel_then_token_revoked_and_close_4003(
        channel_server, seed, api):
    tenant, rest = _agent_session(seed, api)
    assert rest.post("/auth/logout").status_code == 204
    client = channel_server().connect(tenant.host)  # another API process than the logout's
    client.send({"type": "auth", "token": rest.token})
    assert client.expect("error")["code"] == "token_revoked"
    assert client.closed_with() == 4003


def test_given_an_open_socket_when_its_user_is_signed_out_everywhere_then_the_next_command_is_refused_4003(
        channel_server, seed, api):
    tenant, rest = _agent_session(seed, api)
    client = channel_server().connect(tenant.host)
    client.auth(rest.token)
    assert client.command("mute")["ok"] is True
    assert api.login(tenant).delete(f"/api/users/{tenant.users['ana'].id}/sessions").status_code == 204
    client.send({"type": "unmute", "id": "x"})
    assert client.expect("error")["code"] == "token_revoked"
    assert client.closed_with() == 4003


def test_given_an_open_socket_when_redis_is_unreachable_at_the_recheck_then_it_stays_open_and_a_new_one_is_refused(
        channel_server, seed, api, monkeypatch):
    import redis

    from app.accounts.revocation import SessionRevocations
    from app.api.security import REVOCATIONS_EXTENSION

    tenant, rest = _agent_session(seed, api)
    server = channel_server()
    client = server.connect(tenant.host)
    client.auth(rest.token)
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, socket_timeout=0.2)
    monkeypatch.setitem(server.app.extensions, REVOCATIONS_EXTENSION, SessionRevocations(3600, dead))
    assert client.command("mute")["ok"] is True  # a cache blip does not end an agent's shift
    fresh = server.connect(tenant.host)
    fresh.send({"type": "auth", "token": rest.token})
    assert fresh.expect("error")["code"] == "session_store_unavailable"
    assert fresh.closed_with() == 4003
