"""API keys authenticate /api/*: Bearer sk_… or X-API-Key, scopes per endpoint, tenant from the
host the key belongs to, revoked/expired/owner-gone keys refused, last_used_at kept cheaply."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.models.users import ApiKey

KEYS = "/api/api-keys"


def _key(admin, scopes, **extra) -> dict:
    response = admin.post(KEYS, json={"scopes": scopes, **extra})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _set_key(owner_engine, key_id: str, **values) -> None:
    with Session(owner_engine) as db, db.begin():
        db.execute(update(ApiKey).where(ApiKey.id == uuid.UUID(key_id)).values(**values))


def _last_used(owner_engine, key_id: str):
    with Session(owner_engine) as db:
        return db.scalar(select(ApiKey.last_used_at).where(ApiKey.id == uuid.UUID(key_id)))


def test_given_a_key_with_the_users_scope_when_sent_as_bearer_or_x_api_key_then_users_are_listed(api, seed):
    acme = seed.tenant()
    key = _key(api.login(acme), ["users"])["key"]
    anonymous = api.anonymous(acme.host)
    as_bearer = anonymous.get("/api/users", headers={"Authorization": f"Bearer {key}"})
    as_header = anonymous.get("/api/users", headers={"X-API-Key": key})
    assert as_bearer.status_code == 200, as_bearer.get_json()
    assert as_header.status_code == 200, as_header.get_json()
    assert [u["username"] for u in as_header.get_json()["items"]] == ["admin"]


def test_given_a_key_without_the_scope_when_calling_then_403_scope_required(api, seed):
    acme = seed.tenant()
    key = _key(api.login(acme), ["calls"])["key"]
    response = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": key})
    assert response.status_code == 403
    assert response.get_json()["code"] == "scope_required"
    assert response.get_json()["details"] == {"scope": "users"}


def test_given_a_read_only_scope_when_writing_then_403_and_reading_then_200(api, seed):
    acme = seed.tenant()
    key = _key(api.login(acme), ["queues:read"])["key"]
    client = api.anonymous(acme.host)
    assert client.get("/api/queues", headers={"X-API-Key": key}).status_code == 200
    refused = client.post("/api/queues", json={"name": "sales"}, headers={"X-API-Key": key})
    assert refused.status_code == 403 and refused.get_json()["code"] == "scope_required"


def test_given_another_tenants_key_when_used_on_this_host_then_401_invalid_api_key(api, seed):
    acme, globex = seed.tenant(), seed.tenant()
    key = _key(api.login(acme), ["users"])["key"]
    response = api.anonymous(globex.host).get("/api/users", headers={"X-API-Key": key})
    assert response.status_code == 401
    assert response.get_json()["code"] == "invalid_api_key"


def test_given_an_unknown_key_when_used_then_401_invalid_api_key(api, seed):
    acme = seed.tenant()
    response = api.anonymous(acme.host).get(
        "/api/users", headers={"Authorization": "Bearer sk_" + "A" * 43})
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_api_key"


def test_given_a_revoked_key_when_used_then_401_api_key_revoked(api, seed):
    acme = seed.tenant()
    admin = api.login(acme)
    created = _key(admin, ["users"])
    assert admin.delete(f"{KEYS}/{created['id']}").status_code == 204
    response = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": created["key"]})
    assert response.status_code == 401 and response.get_json()["code"] == "api_key_revoked"


def test_given_an_expired_key_when_used_then_401_api_key_expired(api, seed, owner_engine):
    acme = seed.tenant()
    created = _key(api.login(acme), ["users"])
    _set_key(owner_engine, created["id"], expires_at=datetime.now(timezone.utc) - timedelta(seconds=1))
    response = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": created["key"]})
    assert response.status_code == 401 and response.get_json()["code"] == "api_key_expired"


def test_given_a_deactivated_creator_when_the_key_is_used_then_401_api_key_owner_inactive(api, seed):
    acme = seed.tenant()
    seed.user(acme, "ops", role="admin", permissions=["api_keys.create"])
    created = _key(api.login(acme, "ops"), ["users"])
    seed.set_user(acme, "ops", is_active=False)
    response = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": created["key"]})
    assert response.status_code == 401 and response.get_json()["code"] == "api_key_owner_inactive"


def test_given_a_disabled_tenant_when_its_key_is_used_then_403_account_disabled(api, seed, owner_engine):
    from app.models.tenancy import Account

    acme = seed.tenant()
    created = _key(api.login(acme), ["users"])
    with Session(owner_engine) as db, db.begin():
        db.execute(update(Account).where(Account.id == acme.account_id)
                   .values(disabled_at=datetime.now(timezone.utc)))
    response = api.anonymous(acme.host).get("/api/users", headers={"X-API-Key": created["key"]})
    assert response.status_code == 403 and response.get_json()["code"] == "account_disabled"


def test_given_any_key_when_managing_api_keys_then_403_api_key_not_allowed(api, seed):
    acme = seed.tenant()
    key = _key(api.login(acme), ["users", "calls"])["key"]
    client = api.anonymous(acme.host)
    for method, body in (("GET", None), ("POST", {"scopes": ["users"]})):
        response = client.request(method, KEYS, json=body, headers={"X-API-Key": key})
        assert response.status_code == 403, (method, response.get_json())
        assert response.get_json()["code"] == "api_key_not_allowed"


def test_given_a_license_missing_when_a_scoped_key_calls_then_403_license_required(api, seed):
    acme = seed.tenant()
    key = _key(api.login(acme), ["queues"])["key"]
    seed.set_licenses(acme, ["api-access"])
    response = api.anonymous(acme.host).get("/api/queues", headers={"X-API-Key": key})
    assert response.status_code == 403 and response.get_json()["code"] == "license_required"


def test_given_a_key_used_twice_within_a_minute_then_last_used_at_is_written_once(api, seed, owner_engine):
    acme = seed.tenant()
    created = _key(api.login(acme), ["users"])
    assert _last_used(owner_engine, created["id"]) is None
    client = api.anonymous(acme.host)
    assert client.get("/api/users", headers={"X-API-Key": created["key"]}).status_code == 200
    first = _last_used(owner_engine, created["id"])
    assert first is not None
    assert client.get("/api/users", headers={"X-API-Key": created["key"]}).status_code == 200
    assert _last_used(owner_engine, created["id"]) == first
    stale = first - timedelta(minutes=2)
    _set_key(owner_engine, created["id"], last_used_at=stale)
    assert client.get("/api/users", headers={"X-API-Key": created["key"]}).status_code == 200
    assert _last_used(owner_engine, created["id"]) > first


@pytest.mark.parametrize("path", ["/auth/refresh", "/auth/exchange"])
def test_given_an_api_key_when_refreshing_a_session_then_it_is_not_a_token(api, seed, path):
    acme = seed.tenant()
    key = _key(api.login(acme), ["users"])["key"]
    response = api.anonymous(acme.host).post(path, json={}, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"


def test_given_every_api_blueprint_then_each_has_a_scope_or_is_deliberately_closed_to_keys(api_app):
    """A new resource must be placed in the scope table (docs/api.md) or stay closed to keys."""
    from app.api.api_key_auth import SCOPE_BY_BLUEPRINT

    closed_to_keys = {"api_keys"}  # keys never manage keys
    closed_to_keys |= {"agent_channel"}  # the agent's WebSocket: a login token in its first message
    public = {"api_docs", "api-docs"}  # /api/docs and /api/openapi.json: no authentication at all
    api_blueprints = {rule.endpoint.split(".")[0] for rule in api_app.url_map.iter_rules()
                      if rule.rule.startswith("/api/") and "." in rule.endpoint}
    unplaced = api_blueprints - set(SCOPE_BY_BLUEPRINT) - closed_to_keys - public
    assert unplaced == set(), f"add these blueprints to SCOPE_BY_BLUEPRINT or closed_to_keys: {unplaced}"
