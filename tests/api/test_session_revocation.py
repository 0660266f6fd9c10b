"""Revocable sessions: logout, sign out everywhere, password and role changes end login tokens
on every API process at once; API keys are not sessions; Redis down fails closed (503)."""
from __future__ import annotations

import pytest
import redis

from app.accounts.revocation import SessionRevocations
from app.api.security import REVOCATIONS_EXTENSION

PROTECTED = "/api/api-keys"


@pytest.fixture(scope="module")
def second_app():
    """Another API process against the same Redis and database."""
    from app.api.app import create_app

    return create_app({"TESTING": True})


def _on(app, client) -> object:
    """The same host and token, sent to ``app``."""
    return type(client)(app.test_client(), client.host, client.token)


def _refused(response) -> bool:
    return response.status_code == 401 and response.get_json()["code"] == "token_revoked"


def test_given_a_logout_on_one_api_process_then_the_token_is_refused_on_another_at_once(api, seed, second_app):
    acme = seed.tenant()
    client = api.login(acme)
    elsewhere = _on(second_app, client)
    assert elsewhere.get(PROTECTED).status_code == 200
    assert client.post("/auth/logout").status_code == 204
    assert _refused(elsewhere.get(PROTECTED))
    assert _refused(elsewhere.post("/auth/refresh"))  # a revoked token cannot be refreshed either


def test_given_sign_out_everywhere_by_an_admin_then_every_session_of_that_user_ends_and_others_stay(
        api, seed, second_app):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    first, second = api.login(acme, "sup"), api.login(acme, "sup")
    admin = api.login(acme)
    response = admin.delete(f"/api/users/{acme.users['sup'].id}/sessions")
    assert response.status_code == 204
    assert _refused(first.get("/api/users")) and _refused(_on(second_app, second).get("/api/users"))
    assert admin.get(PROTECTED).status_code == 200
    assert api.login(acme, "sup").get("/auth/mfa").status_code == 200  # signing in again works


def test_given_a_password_change_then_the_users_sessions_end_and_the_new_password_signs_in(api, seed):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    sup = api.login(acme, "sup")
    admin = api.login(acme)
    changed = admin.patch(f"/api/users/{acme.users['sup'].id}", json={"password": "a new password 42"})
    assert changed.status_code == 200, changed.get_json()
    assert _refused(sup.get("/api/users"))
    acme.users["sup"].password = "a new password 42"
    assert api.login(acme, "sup").get("/auth/mfa").status_code == 200
    assert admin.get(PROTECTED).status_code == 200  # the admin changed someone else's password


def test_given_a_role_change_then_sessions_end_and_an_email_change_does_not(api, seed):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    admin = api.login(acme)
    sup = api.login(acme, "sup")
    path = f"/api/users/{acme.users['sup'].id}"
    assert admin.patch(path, json={"email": "sup@example.com"}).status_code == 200
    assert sup.get("/auth/mfa").status_code == 200
    assert admin.patch(path, json={"role": "agent"}).status_code == 200
    assert _refused(sup.get("/auth/mfa"))


def test_given_sign_out_everywhere_then_api_keys_the_user_created_keep_working(api, seed):
    acme = seed.tenant()
    admin = api.login(acme)
    key = admin.post(PROTECTED, json={"scopes": ["users"]}).get_json()["key"]
    other_admin = api.login(acme)
    assert other_admin.delete(f"/api/users/{acme.admin.id}/sessions").status_code == 204
    assert _refused(admin.get(PROTECTED)) and _refused(other_admin.get(PROTECTED))
    with_key = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": key})
    assert with_key.status_code == 200, with_key.get_json()


def test_given_redis_unreachable_then_session_tokens_get_503_and_api_keys_still_work(api, seed, monkeypatch):
    acme = seed.tenant()
    admin = api.login(acme)
    key = admin.post(PROTECTED, json={"scopes": ["users"]}).get_json()["key"]
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, socket_timeout=0.2)
    monkeypatch.setitem(api.app.extensions, REVOCATIONS_EXTENSION, SessionRevocations(3600, dead))
    refused = admin.get("/api/users")
    assert refused.status_code == 503 and refused.get_json()["code"] == "session_store_unavailable"
    assert admin.post("/auth/logout").get_json()["code"] == "session_store_unavailable"
    assert api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": key}).status_code == 200


def test_given_a_password_change_while_redis_is_unreachable_then_503_and_nothing_is_saved(api, seed, monkeypatch):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    admin = api.login(acme)
    key = admin.post(PROTECTED, json={"scopes": ["users"]}).get_json()["key"]
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, socket_timeout=0.2)
    monkeypatch.setitem(api.app.extensions, REVOCATIONS_EXTENSION, SessionRevocations(3600, dead))
    response = api.anonymous(acme.host).patch(f"/api/users/{acme.users['sup'].id}",
                                              json={"password": "a new password 42"},
                                              headers={"X-API-Key": key})
    assert response.status_code == 503 and response.get_json()["code"] == "session_store_unavailable"
    monkeypatch.undo()
    assert api.login(acme, "sup").get("/auth/mfa").status_code == 200  # the old password still works
