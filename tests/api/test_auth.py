"""/auth/login, /auth/refresh, /auth/exchange, /auth/logout and bearer-token checks on /api/."""
from __future__ import annotations

import base64
import json

import jwt as pyjwt
import pytest

from app import limits
from app.models.enums import PERMISSIONS
from tests.api.fixtures import cases

PROTECTED = "/api/api-keys"


def _login(api, tenant, username="admin", password=None, **extra):
    user = tenant.users[username]
    body = {"username": username, "password": password if password is not None else user.password, **extra}
    return api.anonymous(tenant.host).post("/auth/login", json=body)


# --- login -----------------------------------------------------------------------------------

def test_given_valid_credentials_when_logging_in_then_a_bearer_token_for_the_tenant_is_returned(api, seed):
    acme = seed.tenant()
    response = _login(api, acme)
    assert response.status_code == 200
    body = response.get_json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == limits.TOKEN_LIFETIME_SECONDS
    assert body["session"] == "admin"
    assert body["user"]["username"] == "admin" and body["user"]["role"] == "admin"
    assert body["user"]["agent_id"] is None
    assert sorted(body["user"]["permissions"]) == sorted(PERMISSIONS)
    assert body["account"] == {"id": str(acme.account_id), "subdomain": acme.subdomain,
                               "licenses": sorted(["api-access", "queue-mgmt", "programmable-voice"])}
    assert "password" not in json.dumps(body)
    claims = pyjwt.decode(body["token"], options={"verify_signature": False})
    assert claims["tenant"] == acme.subdomain and claims["acct"] == str(acme.account_id)
    assert pyjwt.get_unverified_header(body["token"])["alg"] == "HS256"
    authed = api.anonymous(acme.host).with_token(body["token"])
    assert authed.get(PROTECTED).status_code == 200


def test_given_wrong_password_unknown_user_or_unknown_tenant_when_logging_in_then_the_same_401_reveals_nothing(api, seed):
    acme = seed.tenant()
    wrong_password = _login(api, acme, password="nope")
    unknown_user = api.anonymous(acme.host).post("/auth/login", json={"username": "ghost", "password": "x"})
    unknown_tenant = api.anonymous("nosuchtenant.localhost").post(
        "/auth/login", json={"username": "admin", "password": acme.admin.password})
    for response in (wrong_password, unknown_user, unknown_tenant):
        assert response.status_code == 401
        assert response.get_json() == {"code": "invalid_credentials",
                                       "message": "Invalid username or password."}


def test_given_an_unknown_tenant_or_user_when_logging_in_then_a_bcrypt_check_still_runs(api, seed, bcrypt_checks):
    """Constant work on failure: every login attempt costs exactly one bcrypt comparison, so
    response time does not tell whether the user exists (asserted by counting, not timing)."""
    checked = bcrypt_checks
    acme = seed.tenant()
    api.anonymous(acme.host).post("/auth/login", json={"username": "ghost", "password": "x"})
    api.anonymous("nosuchtenant.localhost").post("/auth/login", json={"username": "admin", "password": "x"})
    _login(api, acme, password="wrong")
    assert len(checked) == 3
    assert all(prefix.startswith("$2") for prefix in checked)  # real bcrypt hashes every time


def test_given_a_deactivated_user_when_logging_in_with_the_right_password_then_401(api, seed):
    acme = seed.tenant()
    seed.user(acme, "gone", role="admin", active=False)
    response = _login(api, acme, "gone")
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_credentials"


def test_given_the_right_credentials_on_another_tenants_host_when_logging_in_then_401(api, seed):
    acme, other = seed.tenant(), seed.tenant()
    response = api.anonymous(other.host).post(
        "/auth/login", json={"username": "admin", "password": "not-others-password"})
    assert response.status_code == 401
    seed.user(acme, "only-in-acme", role="admin")
    response = api.anonymous(other.host).post(
        "/auth/login", json={"username": "only-in-acme", "password": acme.users["only-in-acme"].password})
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_credentials"


@pytest.mark.parametrize("case", cases("login_bad.json"))
def test_given_an_invalid_login_body_when_logging_in_then_422_names_the_field(api, seed, case):
    acme = seed.tenant()
    response = api.anonymous(acme.host).post("/auth/login", json=case["body"])
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "validation_failed"
    assert case["field"] in body["details"]["json"]


def test_given_a_host_without_tenant_when_logging_in_then_400_tenant_required(api, seed):
    response = api.anonymous("localhost").post("/auth/login", json={"username": "a", "password": "b"})
    assert response.status_code == 400 and response.get_json()["code"] == "tenant_required"


def test_given_an_agent_user_when_logging_in_then_the_session_is_agent_and_admin_is_refused(api, seed):
    acme = seed.tenant()
    seed.user(acme, "alice", role="agent", agent=True)
    response = _login(api, acme, "alice")
    assert response.status_code == 200 and response.get_json()["session"] == "agent"
    assert response.get_json()["user"]["permissions"] == []
    refused = _login(api, acme, "alice", session="admin")
    assert refused.status_code == 403
    assert refused.get_json()["code"] == "session_not_allowed"
    assert refused.get_json()["details"] == {"allowed_sessions": ["agent"]}


# --- bearer token checks on /api/ --------------------------------------------------------------

def test_given_no_token_when_calling_an_api_endpoint_then_401_missing_token(api, seed):
    acme = seed.tenant()
    response = api.anonymous(acme.host).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "missing_token"
    response = api.anonymous(acme.host).get(PROTECTED, headers={"Authorization": "Token abc"})
    assert response.status_code == 401 and response.get_json()["code"] == "missing_token"


def test_given_an_unknown_api_path_without_token_when_called_then_401_not_a_route_listing(api, seed):
    acme = seed.tenant()
    response = api.anonymous(acme.host).get("/api/no-such-thing")
    assert response.status_code == 401 and response.get_json()["code"] == "missing_token"


def test_given_tenant_a_token_when_used_on_tenant_b_host_then_401_tenant_mismatch(api, seed):
    acme, globex = seed.tenant(), seed.tenant()
    client = api.login(acme)
    response = client.on_host(globex.host).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "tenant_mismatch"
    response = client.on_host("localhost").get(PROTECTED)
    assert response.status_code == 400 and response.get_json()["code"] == "tenant_required"


def test_given_an_expired_token_when_calling_the_api_then_401_token_expired(api, seed):
    acme = seed.tenant()
    expired = api.mint(acme, lifetime_seconds=-10)
    response = api.anonymous(acme.host).with_token(expired).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "token_expired"


def _tamper(token: str, **claims) -> str:
    header, payload, signature = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data.update(claims)
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    return ".".join((header, forged, signature))


def test_given_a_token_whose_claims_were_edited_when_calling_the_api_then_401_invalid_token(api, seed):
    acme, globex = seed.tenant(), seed.tenant()
    token = api.login(acme).token
    forged = _tamper(token, tenant=globex.subdomain, acct=str(globex.account_id))
    response = api.anonymous(globex.host).with_token(forged).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"


def test_given_a_token_signed_with_another_secret_or_alg_none_when_calling_then_401_invalid_token(api, seed):
    acme = seed.tenant()
    claims = pyjwt.decode(api.login(acme).token, options={"verify_signature": False})
    other_secret = pyjwt.encode(claims, "not-the-secret-" + "x" * 32, algorithm="HS256")
    unsigned = pyjwt.encode(claims, None, algorithm="none")
    for token in (other_secret, unsigned, "not.a.jwt", "garbage"):
        response = api.anonymous(acme.host).with_token(token).get(PROTECTED)
        assert response.status_code == 401, token
        assert response.get_json()["code"] == "invalid_token"


def test_given_a_validly_signed_token_naming_another_accounts_id_when_calling_then_401(api, seed):
    """Defence in depth: even a correctly signed token whose account does not match its tenant
    host (or whose user is not in that account) is refused after the database lookup."""
    acme, globex = seed.tenant(), seed.tenant()
    token = api.mint(acme, acct=str(globex.account_id))
    response = api.anonymous(acme.host).with_token(token).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"
    token = api.mint(acme, acct="not-a-uuid")
    response = api.anonymous(acme.host).with_token(token).get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"


def test_given_a_user_deactivated_after_login_when_calling_then_401_invalid_token(api, seed):
    acme = seed.tenant()
    client = api.login(acme)
    seed.set_user(acme, "admin", is_active=False)
    response = client.get(PROTECTED)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"


# --- refresh, logout, exchange -----------------------------------------------------------------

def test_given_a_valid_token_when_refreshing_then_a_new_working_token_of_the_same_session_is_issued(api, seed):
    acme = seed.tenant()
    client = api.login(acme)
    response = client.post("/auth/refresh")
    assert response.status_code == 200
    body = response.get_json()
    assert body["session"] == "admin" and body["token"] != client.token
    assert client.with_token(body["token"]).get(PROTECTED).status_code == 200


def test_given_an_expired_or_foreign_token_when_refreshing_then_401(api, seed):
    acme, globex = seed.tenant(), seed.tenant()
    expired = api.anonymous(acme.host).with_token(api.mint(acme, lifetime_seconds=-1))
    assert expired.post("/auth/refresh").get_json()["code"] == "token_expired"
    foreign = api.login(acme).on_host(globex.host)
    response = foreign.post("/auth/refresh")
    assert response.status_code == 401 and response.get_json()["code"] == "tenant_mismatch"
    assert api.anonymous(acme.host).post("/auth/refresh").get_json()["code"] == "missing_token"


def test_given_a_session_when_logging_out_then_204_and_that_token_is_revoked_at_once(api, seed):
    acme = seed.tenant()
    client = api.login(acme)
    other = api.login(acme)  # another session of the same user is not this one
    response = client.post("/auth/logout")
    assert response.status_code == 204 and response.data == b""
    refused = client.get(PROTECTED)
    assert refused.status_code == 401 and refused.get_json()["code"] == "token_revoked"
    assert other.get(PROTECTED).status_code == 200


def test_given_no_token_or_an_invalid_one_when_logging_out_then_204_with_nothing_to_revoke(api, seed):
    acme = seed.tenant()
    assert api.anonymous(acme.host).post("/auth/logout").status_code == 204
    assert api.anonymous(acme.host).with_token("not-a-jwt").post("/auth/logout").status_code == 204


def test_given_an_admin_who_is_also_an_agent_when_exchanging_then_agent_then_back_to_admin(api, seed):
    acme = seed.tenant()
    seed.user(acme, "boss", role="admin", agent=True)
    admin = api.login(acme, "boss")
    response = admin.post("/auth/exchange", json={})
    assert response.status_code == 200
    agent_body = response.get_json()
    assert agent_body["session"] == "agent" and agent_body["user"]["permissions"] == []
    assert agent_body["user"]["agent_id"] is not None
    agent = admin.with_token(agent_body["token"])
    # an admin acting as agent holds only explicitly granted permissions
    refused = agent.post("/api/api-keys", json={})
    assert refused.status_code == 403 and refused.get_json()["code"] == "permission_denied"
    back = agent.post("/auth/exchange", json={"session": "admin"})
    assert back.status_code == 200 and back.get_json()["session"] == "admin"
    assert admin.with_token(back.get_json()["token"]).post("/api/api-keys", json={}).status_code == 201


def test_given_an_admin_without_agent_profile_when_exchanging_to_agent_then_403(api, seed):
    acme = seed.tenant()
    response = api.login(acme).post("/auth/exchange", json={"session": "agent"})
    assert response.status_code == 403
    assert response.get_json()["code"] == "exchange_not_allowed"
    assert response.get_json()["details"] == {"allowed_sessions": ["admin"]}


def test_given_an_agent_user_when_exchanging_to_admin_then_403(api, seed):
    acme = seed.tenant()
    seed.user(acme, "alice", role="agent")
    response = api.login(acme, "alice").post("/auth/exchange", json={})
    assert response.status_code == 403 and response.get_json()["code"] == "exchange_not_allowed"


def test_given_a_bad_exchange_body_when_exchanging_then_422(api, seed):
    acme = seed.tenant()
    response = api.login(acme).post("/auth/exchange", json={"session": "root"})
    assert response.status_code == 422 and "session" in response.get_json()["details"]["json"]


def test_given_no_token_when_exchanging_then_401_before_the_body_is_read(api, seed):
    acme = seed.tenant()
    response = api.anonymous(acme.host).post("/auth/exchange", json={"session": "root"})
    assert response.status_code == 401 and response.get_json()["code"] == "missing_token"


# --- token lifetime --------------------------------------------------------------------------

def test_given_sbc_token_lifetime_seconds_when_the_app_is_built_then_tokens_live_that_long(monkeypatch, seed, database):
    from app.api.app import create_app
    from tests.plugins.api import ApiHarness

    monkeypatch.setenv("SBC_TOKEN_LIFETIME_SECONDS", "120")
    harness = ApiHarness(create_app({"TESTING": True}))
    acme = seed.tenant()
    body = harness.anonymous(acme.host).post(
        "/auth/login", json={"username": "admin", "password": acme.admin.password}).get_json()
    assert body["expires_in"] == 120
    claims = pyjwt.decode(body["token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 120


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_given_a_bad_token_lifetime_when_the_app_is_built_then_it_refuses_to_start(monkeypatch, value):
    from app.api.app import create_app
    from app.errors import ValidationFailed

    monkeypatch.setenv("SBC_TOKEN_LIFETIME_SECONDS", value)
    with pytest.raises(ValidationFailed, match="SBC_TOKEN_LIFETIME_SECONDS"):
        create_app()
