"""Single sign-on against a real OpenID provider (oidc-provider on loopback, tests/sso/provider):
the authorization code flow with PKCE over HTTP, each refusal with its own code, and tenant
isolation. The browser version of the flow is test_sso_browser.py."""
from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.sso import id_token, issuer
from app.accounts.sso.errors import SsoProviderUnavailable
from app.accounts.sso.flow_state import FlowStates
from app.api.sso.routes import SSO_CLOCK_EXTENSION, STATES_EXTENSION
from app.crypto import decrypt_secret
from app.models.sso import SsoProvider
from app.models.users import User
from app.settings import get_settings
from tests.sso.provider import sign_in_at_provider

ADMIN_ONLY = "/api/users"  # an admin-session endpoint: proves the token's session and role


def _configure(api, oidc, tenant, *, issuer_index: int = 0, **overrides: Any) -> dict[str, Any]:
    chosen = oidc.issuers[issuer_index]
    client_id, secret = oidc.register_client(chosen, [f"http://{tenant.host}/auth/sso/callback"])
    body = {"issuer": chosen, "client_id": client_id, "client_secret": secret, "display_name": "Example IdP",
            "role_claim": "groups", "role_mapping": [{"value": "sbc-admins", "role": "admin"},
                                                     {"value": "staff", "role": "agent"}],
            "default_role": None, "create_users": True, **overrides}
    answer = api.login(tenant).put("/api/account/sso", json=body)
    assert answer.status_code == 200, answer.get_json()
    return {**answer.get_json(), "client_secret": secret}


def _start(api, tenant, **query: str) -> str:
    started = api.anonymous(tenant.host).get("/auth/sso/start", query_string=query)
    assert started.status_code == 302, started.get_json()
    return started.headers["Location"]


def _callback(api, tenant, answer: dict[str, str]):
    return api.anonymous(tenant.host).get("/auth/sso/callback", query_string=answer)


def _two_tenants(api, seed, oidc):
    """acme on the first issuer, globex on the second."""
    acme, globex = seed.tenant(), seed.tenant()
    _configure(api, oidc, acme, issuer_index=0)
    _configure(api, oidc, globex, issuer_index=1)
    return acme, globex


def _sso_user(owner_engine, tenant, subject: str) -> User | None:
    with Session(owner_engine) as db:
        return db.scalar(select(User).where(User.account_id == tenant.account_id, User.sso_subject == subject))


def test_given_a_configured_tenant_when_a_person_signs_in_at_the_provider_then_the_callback_answers_that_tenants_login(
        api, seed, oidc, owner_engine):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    location = _start(api, acme)
    sent = parse_qs(urlsplit(location).query)
    assert location.startswith(oidc.issuers[0] + "/auth?")
    assert sent["code_challenge_method"] == ["S256"] and len(sent["code_challenge"][0]) == 43
    assert len(sent["state"][0]) == 48 and len(sent["nonce"][0]) == 48
    assert sent["redirect_uri"] == [f"http://{acme.host}/auth/sso/callback"]

    answered = _callback(api, acme, sign_in_at_provider(location, "alice"))

    assert answered.status_code == 200, answered.get_json()
    assert answered.headers["Cache-Control"] == "no-store"
    body = answered.get_json()
    assert body["account"]["subdomain"] == acme.subdomain
    assert body["user"]["role"] == "admin" and body["user"]["username"] == "alice"
    assert api.anonymous(acme.host).with_token(body["token"]).get(ADMIN_ONLY).status_code == 200
    created = _sso_user(owner_engine, acme, "alice")
    assert created is not None and created.sso_issuer == oidc.issuers[0]
    again = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))
    assert again.status_code == 200 and again.get_json()["user"]["id"] == str(created.id)


def test_given_a_whole_sign_in_then_no_log_line_holds_the_client_secret_code_or_id_token(api, seed, oidc, caplog):
    acme = seed.tenant()
    config = _configure(api, oidc, acme)
    caplog.set_level(logging.DEBUG)

    answer = sign_in_at_provider(_start(api, acme), "alice")
    signed = _callback(api, acme, answer)

    assert signed.status_code == 200
    # the product's loggers (the test's own HTTP driver, through urllib3, logs the provider's URLs)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("app"))
    assert "single sign-on: user" in logged  # the sign-in itself is logged...
    for secret in (config["client_secret"], answer["code"], answer["state"], signed.get_json()["token"]):
        assert secret not in logged  # ...but nothing that would let a log reader act


def test_given_redis_unreachable_when_a_sign_in_starts_then_503_session_store_unavailable(api, seed, oidc, monkeypatch):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, socket_timeout=0.2)
    monkeypatch.setitem(api.app.extensions, STATES_EXTENSION, FlowStates(dead))

    refused = api.anonymous(acme.host).get("/auth/sso/start")

    assert refused.status_code == 503 and refused.get_json()["code"] == "session_store_unavailable"


def test_given_the_login_page_then_it_learns_the_button_and_never_the_provider_details(api, seed, oidc):
    acme, plain = seed.tenant(), seed.tenant()
    config = _configure(api, oidc, acme)

    offered = api.anonymous(acme.host).get("/auth/sso")
    nothing = api.anonymous(plain.host).get("/auth/sso")

    assert offered.status_code == 200
    assert offered.get_json() == {"enabled": True, "display_name": "Example IdP", "start_url": "/auth/sso/start"}
    assert config["client_secret"] not in offered.get_data(as_text=True)
    assert config["client_id"] not in offered.get_data(as_text=True)
    assert nothing.get_json() == {"enabled": False, "display_name": None, "start_url": None}
    assert api.anonymous(plain.host).get("/auth/sso/start").get_json()["code"] == "sso_not_configured"


def test_given_a_saved_configuration_then_the_secret_is_encrypted_at_rest_and_never_returned(
        api, seed, oidc, owner_engine):
    acme = seed.tenant()
    config = _configure(api, oidc, acme)
    admin = api.login(acme)

    shown = admin.get("/api/account/sso")
    kept = admin.put("/api/account/sso", json={k: config[k] for k in (
        "issuer", "client_id", "display_name", "role_claim", "role_mapping", "default_role", "create_users")})

    assert shown.status_code == 200 and kept.status_code == 200, kept.get_json()
    for answer in (shown, kept):
        assert config["client_secret"] not in answer.get_data(as_text=True)
        assert answer.get_json()["client_secret_set"] is True
        assert answer.get_json()["redirect_uri"] == f"http://{acme.host}/auth/sso/callback"
    with Session(owner_engine) as db:
        stored = db.scalar(select(SsoProvider).where(SsoProvider.account_id == acme.account_id))
        assert stored is not None and config["client_secret"] not in stored.client_secret_encrypted
        assert decrypt_secret(stored.client_secret_encrypted) == config["client_secret"]


def test_given_a_first_configuration_without_secret_or_with_a_private_issuer_then_422(api, seed):
    acme = seed.tenant()
    admin = api.login(acme)
    base = {"issuer": "https://idp.example.com", "client_id": "sbc", "display_name": "IdP"}

    no_secret = admin.put("/api/account/sso", json=base)
    private = admin.put("/api/account/sso", json={**base, "issuer": "https://10.0.0.7", "client_secret": "s"})
    metadata = admin.put("/api/account/sso", json={**base, "issuer": "http://169.254.169.254", "client_secret": "s"})

    assert no_secret.status_code == 422 and "client_secret" in no_secret.get_json()["details"]
    assert private.status_code == 422 and private.get_json()["code"] == "unsafe_url"
    assert metadata.status_code == 422 and metadata.get_json()["code"] == "unsafe_url"
    assert admin.get("/api/account/sso").get_json()["code"] == "sso_not_configured"


def test_given_a_used_state_when_the_callback_is_replayed_then_400_sso_state_invalid(api, seed, oidc):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    answer = sign_in_at_provider(_start(api, acme), "alice")

    first = _callback(api, acme, answer)
    replayed = _callback(api, acme, answer)

    assert first.status_code == 200
    assert replayed.status_code == 400 and replayed.get_json()["code"] == "sso_state_invalid"


def test_given_a_sign_in_started_on_tenant_a_when_its_callback_reaches_tenant_b_then_refused_and_burnt(
        api, seed, oidc):
    acme, globex = _two_tenants(api, seed, oidc)
    answer = sign_in_at_provider(_start(api, acme), "alice")

    on_b = _callback(api, globex, answer)
    back_on_a = _callback(api, acme, answer)

    assert on_b.status_code == 400 and on_b.get_json()["code"] == "sso_state_invalid"
    assert back_on_a.status_code == 400 and back_on_a.get_json()["code"] == "sso_state_invalid"


def test_given_tenant_bs_sign_in_when_the_answer_names_tenant_as_issuer_then_401_sso_issuer_mismatch(
        api, seed, oidc):
    acme, globex = _two_tenants(api, seed, oidc)
    answer = sign_in_at_provider(_start(api, globex), "alice")

    mixed_up = _callback(api, globex, {**answer, "iss": oidc.issuers[0]})

    assert answer["iss"] == oidc.issuers[1]
    assert mixed_up.status_code == 401 and mixed_up.get_json()["code"] == "sso_issuer_mismatch"


def test_given_an_id_token_of_tenant_as_issuer_when_checked_for_tenant_b_then_sso_issuer_mismatch(oidc):
    """Both issuers sign with the same key: only the issuer check can refuse it."""
    token = oidc.mint_id_token(iss=oidc.issuers[0], aud="globex-client", sub="alice", nonce="n1")
    keys_of_b = issuer.key_set(issuer.discover(oidc.issuers[1]))

    with pytest.raises(Exception) as refused:
        id_token.verify(token, jwks=keys_of_b, issuer=oidc.issuers[1], client_id="globex-client",
                        nonce="n1", now=time.time())
    assert getattr(refused.value, "code", None) == "sso_issuer_mismatch"


@pytest.mark.parametrize(("change", "code"), [
    ({"aud": "another-client"}, "sso_audience_mismatch"),
    ({"aud": ["acme-client", "another-client"], "azp": "another-client"}, "sso_audience_mismatch"),
    ({"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200}, "sso_token_expired"),
    ({"nonce": "from-another-sign-in"}, "sso_nonce_mismatch"),
    ({"sub": None}, "sso_token_invalid"),
    ({"iat": int(time.time()) + 3600, "exp": int(time.time()) + 7200}, "sso_token_invalid"),  # from the future
])
def test_given_an_id_token_signed_by_the_provider_with_a_wrong_claim_then_refused_with_its_code(oidc, change, code):
    claims = {"iss": oidc.issuers[0], "aud": "acme-client", "sub": "alice", "nonce": "n1", **change}
    token = oidc.mint_id_token(**{k: v for k, v in claims.items() if v is not None})
    keys = issuer.key_set(issuer.discover(oidc.issuers[0]))

    with pytest.raises(Exception) as refused:
        id_token.verify(token, jwks=keys, issuer=oidc.issuers[0], client_id="acme-client", nonce="n1",
                        now=time.time())
    assert getattr(refused.value, "code", None) == code


def test_given_an_id_token_signed_by_another_key_then_sso_signature_invalid(oidc):
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    forger = RSAKey.generate_key(2048, parameters={"kid": oidc.key.kid})
    now = int(time.time())
    token = jwt.encode({"alg": "RS256", "kid": oidc.key.kid}, {
        "iss": oidc.issuers[0], "aud": "acme-client", "sub": "alice", "nonce": "n1", "iat": now, "exp": now + 600},
        forger)
    keys = issuer.key_set(issuer.discover(oidc.issuers[0]))

    with pytest.raises(Exception) as refused:
        id_token.verify(token, jwks=keys, issuer=oidc.issuers[0], client_id="acme-client", nonce="n1", now=now)
    assert getattr(refused.value, "code", None) == "sso_signature_invalid"


def test_given_the_providers_real_id_token_when_our_clock_is_past_its_expiry_then_401_sso_token_expired(
        api, seed, oidc, monkeypatch):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    answer = sign_in_at_provider(_start(api, acme), "alice")
    monkeypatch.setitem(api.app.extensions, SSO_CLOCK_EXTENSION, lambda: time.time() + 2 * 3600)

    late = _callback(api, acme, answer)

    assert late.status_code == 401 and late.get_json()["code"] == "sso_token_expired"


def test_given_an_unknown_person_and_no_user_creation_then_403_sso_user_not_provisioned(api, seed, oidc, owner_engine):
    acme = seed.tenant()
    _configure(api, oidc, acme, create_users=False)

    refused = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))

    assert refused.status_code == 403 and refused.get_json()["code"] == "sso_user_not_provisioned"
    assert _sso_user(owner_engine, acme, "alice") is None


def test_given_claims_that_map_to_no_role_then_403_sso_role_not_mapped(api, seed, oidc):
    acme = seed.tenant()
    _configure(api, oidc, acme)

    refused = _callback(api, acme, sign_in_at_provider(_start(api, acme), "carol"))  # no groups

    assert refused.status_code == 403 and refused.get_json()["code"] == "sso_role_not_mapped"


def test_given_a_password_user_with_the_same_name_then_single_sign_on_never_takes_it_over(api, seed, oidc, owner_engine):
    acme = seed.tenant()
    existing = seed.user(acme, "alice", role="agent")
    _configure(api, oidc, acme)

    signed = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))

    assert signed.status_code == 200, signed.get_json()
    assert signed.get_json()["user"]["id"] != str(existing.id)
    assert signed.get_json()["user"]["username"].startswith("alice-")
    assert api.login(acme, "alice").get("/auth/mfa").status_code == 200  # the password user is untouched


def test_given_a_changed_mapping_when_the_person_signs_in_again_then_the_role_changes_and_old_sessions_end(
        api, seed, oidc):
    acme = seed.tenant()
    config = _configure(api, oidc, acme)
    first = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice")).get_json()
    mapping = [{"value": "sbc-admins", "role": "supervisor"}]
    assert api.login(acme).put("/api/account/sso", json={k: config[k] for k in (
        "issuer", "client_id", "display_name", "role_claim", "create_users")} | {"role_mapping": mapping}
    ).status_code == 200

    second = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))

    assert second.status_code == 200 and second.get_json()["user"]["role"] == "supervisor"
    old = api.anonymous(acme.host).with_token(first["token"]).get("/auth/mfa")
    assert old.status_code == 401 and old.get_json()["code"] == "token_revoked"
    assert api.anonymous(acme.host).with_token(second.get_json()["token"]).get("/auth/mfa").status_code == 200


def test_given_the_provider_refuses_when_the_callback_carries_its_error_then_401_sso_denied_and_the_state_is_used(
        api, seed, oidc):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    state = parse_qs(urlsplit(_start(api, acme)).query)["state"][0]

    denied = _callback(api, acme, {"state": state, "error": "access_denied"})
    retried = _callback(api, acme, {"state": state, "code": "x"})

    assert denied.status_code == 401 and denied.get_json()["code"] == "sso_denied"
    assert retried.get_json()["code"] == "sso_state_invalid"


def test_given_loopback_not_allowed_at_the_moment_of_use_then_the_saved_issuer_is_refused_with_502(
        api, seed, oidc, monkeypatch):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    strict = dataclasses.replace(get_settings(), allow_loopback_sso=False)
    monkeypatch.setattr(issuer, "get_settings", lambda: strict)

    refused = api.anonymous(acme.host).get("/auth/sso/start")

    assert refused.status_code == 502
    assert refused.get_json()["code"] == "sso_provider_unavailable"
    assert refused.get_json()["details"]["reason"] == "unsafe_url"
    assert refused.get_json()["details"]["url_reason"] == "loopback"
    with pytest.raises(SsoProviderUnavailable):
        issuer.discover(oidc.issuers[0])


def test_given_an_account_that_requires_totp_then_a_single_sign_on_session_signs_in_and_refreshes_without_it(
        api, seed, oidc):
    """The identity provider owns the MFA of a single sign-on; the password path still requires TOTP."""
    acme = seed.tenant()
    _configure(api, oidc, acme)
    assert api.login(acme).put("/api/account/mfa", json={"required": True}).status_code == 200

    signed = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))
    refreshed = api.anonymous(acme.host).with_token(signed.get_json()["token"]).post("/auth/refresh")
    again = api.anonymous(acme.host).with_token(refreshed.get_json()["token"]).post("/auth/refresh")
    by_password = api.anonymous(acme.host).post("/auth/login", json={"username": "admin",
                                                                      "password": acme.admin.password})

    assert signed.status_code == 200 and refreshed.status_code == 200 and again.status_code == 200
    assert by_password.status_code == 403 and by_password.get_json()["code"] == "mfa_enrolment_required"


def test_given_a_disabled_configuration_then_the_button_is_gone_and_sign_ins_are_refused(api, seed, oidc):
    acme = seed.tenant()
    _configure(api, oidc, acme)
    answer = sign_in_at_provider(_start(api, acme), "alice")  # started while enabled
    assert api.login(acme).put("/api/account/sso", json={
        "issuer": oidc.issuers[0], "client_id": "kept", "display_name": "Example IdP", "enabled": False,
    }).status_code == 200

    offered = api.anonymous(acme.host).get("/auth/sso")
    started = api.anonymous(acme.host).get("/auth/sso/start")
    finished = _callback(api, acme, answer)

    assert offered.get_json() == {"enabled": False, "display_name": None, "start_url": None}
    assert started.status_code == 404 and started.get_json()["code"] == "sso_not_configured"
    assert finished.status_code == 404 and finished.get_json()["code"] == "sso_not_configured"


def test_given_an_admin_links_an_existing_user_then_that_persons_sign_in_opens_it_and_unlinking_stops_it(api, seed, oidc):
    acme = seed.tenant()
    existing = seed.user(acme, "alice.smith", role="supervisor")
    other = seed.user(acme, "someone", role="agent")
    _configure(api, oidc, acme, create_users=False)
    admin = api.login(acme)

    linked = admin.put(f"/api/users/{existing.id}/sso", json={"subject": "alice"})
    taken = admin.put(f"/api/users/{other.id}/sso", json={"subject": "alice"})
    signed = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))
    unlinked = admin.delete(f"/api/users/{existing.id}/sso")
    after = _callback(api, acme, sign_in_at_provider(_start(api, acme), "alice"))

    assert linked.status_code == 200 and linked.get_json() == {"issuer": oidc.issuers[0], "subject": "alice"}
    assert taken.status_code == 409 and taken.get_json()["code"] == "sso_subject_taken"
    assert signed.status_code == 200 and signed.get_json()["user"]["id"] == str(existing.id)
    assert signed.get_json()["user"]["role"] == "admin"  # the mapping's role (sbc-admins) from now on
    assert unlinked.status_code == 204
    assert after.status_code == 403 and after.get_json()["code"] == "sso_user_not_provisioned"


def test_given_no_single_sign_on_when_linking_a_user_then_404_sso_not_configured(api, seed):
    acme = seed.tenant()
    user = seed.user(acme, "bob")

    refused = api.login(acme).put(f"/api/users/{user.id}/sso", json={"subject": "bob"})

    assert refused.status_code == 404 and refused.get_json()["code"] == "sso_not_configured"


def test_given_an_issuer_nobody_answers_when_a_sign_in_starts_then_502_with_the_reason_connection_error(api, seed):
    from tests.faults.processes import free_port

    acme = seed.tenant()
    silent = f"http://127.0.0.1:{free_port()}"
    assert api.login(acme).put("/api/account/sso", json={
        "issuer": silent, "client_id": "sbc", "client_secret": "s", "display_name": "Gone"}).status_code == 200

    refused = api.anonymous(acme.host).get("/auth/sso/start")

    assert refused.status_code == 502, refused.get_json()
    assert refused.get_json()["code"] == "sso_provider_unavailable"
    assert refused.get_json()["details"] == {"reason": "connection_error", "endpoint": "discovery"}
