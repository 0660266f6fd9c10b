"""TOTP second factor: enrolment, sign-in with a code (frozen clock), replay, drift window,
recovery codes, the throttle, the tenant requirement and the admin's reset."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.accounts import totp
from app.api.auth.routes import MFA_CLOCK_EXTENSION
from app.models.users import User

PROTECTED = "/api/api-keys"
STEP = limits.TOTP_STEP_SECONDS
T0 = 1_800_000_000.0  # a step boundary (divisible by 30)


@pytest.fixture
def clock(api, monkeypatch) -> list[float]:
    """The time TOTP codes are checked against; tests move it by setting ``clock[0]``."""
    now = [T0]
    monkeypatch.setitem(api.app.extensions, MFA_CLOCK_EXTENSION, lambda: now[0])
    return now


def _code(secret: str, at: float) -> str:
    return totp.code_at_step(secret, totp.step_at(at))


def _enrol(client, clock) -> tuple[str, list[str]]:
    """Enrol and confirm at ``clock[0]`` (that step is then used); returns (secret, recovery codes)."""
    started = client.post("/auth/mfa/totp", json={})
    assert started.status_code == 200, started.get_json()
    secret = started.get_json()["secret"]
    confirmed = client.post("/auth/mfa/totp/confirm", json={"code": _code(secret, clock[0])})
    assert confirmed.status_code == 200, confirmed.get_json()
    return secret, confirmed.get_json()["recovery_codes"]


def _challenge(api, tenant, username="admin") -> str:
    user = tenant.users[username]
    response = api.anonymous(tenant.host).post("/auth/login", json={"username": username,
                                                                   "password": user.password})
    assert response.status_code == 401, response.get_json()
    body = response.get_json()
    assert body["code"] == "mfa_required" and "token" not in body
    assert body["details"]["methods"] == ["totp", "recovery_code"]
    assert body["details"]["expires_in"] == limits.MFA_CHALLENGE_SECONDS
    return body["details"]["challenge_token"]


def _second_step(api, tenant, challenge: str, code: str):
    return api.anonymous(tenant.host).post("/auth/login/mfa", json={"challenge_token": challenge,
                                                                    "code": code})


# --- enrolment -------------------------------------------------------------------------------

def test_given_a_user_when_enrolling_then_the_secret_is_shown_once_stored_encrypted_and_inactive_until_confirmed(
        api, seed, clock, owner_engine):
    acme = seed.tenant()
    admin = api.login(acme)
    started = admin.post("/auth/mfa/totp", json={})
    assert started.status_code == 200
    shown = started.get_json()
    secret = shown["secret"]
    assert shown["otpauth_uri"].startswith("otpauth://totp/SaaS-SBC:admin%40" + acme.subdomain)
    assert f"secret={secret}" in shown["otpauth_uri"]
    assert shown["qr_svg"].startswith("data:image/svg+xml")
    assert (shown["digits"], shown["period"]) == (6, 30)
    with Session(owner_engine) as db:
        stored = db.scalar(select(User.totp_secret_encrypted).where(User.id == acme.admin.id))
    assert stored and secret not in stored  # Fernet ciphertext, not the secret
    assert admin.get("/auth/mfa").get_json()["totp"] == "pending"
    assert api.login(acme).get(PROTECTED).status_code == 200  # not active yet: password alone

    wrong = admin.post("/auth/mfa/totp/confirm", json={"code": _code(secret, T0 + 5 * STEP)})
    assert wrong.status_code == 422 and wrong.get_json()["code"] == "invalid_confirmation_code"
    confirmed = admin.post("/auth/mfa/totp/confirm", json={"code": _code(secret, T0)})
    assert confirmed.status_code == 200
    codes = confirmed.get_json()["recovery_codes"]
    assert len(codes) == 10 and len(set(codes)) == 10
    assert confirmed.get_json()["login"] is None
    status = admin.get("/auth/mfa").get_json()
    assert status == {"totp": "enrolled", "enrolled_at": status["enrolled_at"],
                      "recovery_codes_left": 10, "required_by_account": False}
    again = admin.post("/auth/mfa/totp", json={})
    assert again.status_code == 409 and again.get_json()["code"] == "totp_already_enrolled"
    assert "secret" not in admin.get("/auth/mfa").get_data(as_text=True)


def test_given_no_enrolment_started_when_confirming_then_409(api, seed, clock):
    acme = seed.tenant()
    response = api.login(acme).post("/auth/mfa/totp/confirm", json={"code": "123456"})
    assert response.status_code == 409 and response.get_json()["code"] == "totp_enrolment_not_started"


# --- sign-in ---------------------------------------------------------------------------------

def test_given_an_enrolled_user_when_signing_in_with_password_then_code_then_the_normal_login_body(api, seed, clock):
    acme = seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    clock[0] = T0 + 3 * STEP
    response = _second_step(api, acme, _challenge(api, acme), _code(secret, clock[0]))
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["token_type"] == "Bearer" and body["session"] == "admin"
    assert body["user"]["username"] == "admin" and body["account"]["subdomain"] == acme.subdomain
    assert api.anonymous(acme.host).with_token(body["token"]).get(PROTECTED).status_code == 200


def test_given_a_code_already_used_when_signing_in_again_with_it_then_refused_as_reused(api, seed, clock):
    acme = seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    # the confirmation used T0's code: it cannot sign in
    reused = _second_step(api, acme, _challenge(api, acme), _code(secret, T0))
    assert reused.status_code == 401 and reused.get_json()["code"] == "mfa_code_reused"
    clock[0] = T0 + STEP
    code = _code(secret, clock[0])
    assert _second_step(api, acme, _challenge(api, acme), code).status_code == 200
    replay = _second_step(api, acme, _challenge(api, acme), code)
    assert replay.status_code == 401 and replay.get_json()["code"] == "mfa_code_reused"


def test_given_codes_one_step_off_then_accepted_and_two_steps_off_then_refused(api, seed, clock):
    acme = seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    now = T0 + 10 * STEP
    clock[0] = now
    for off in (-2, 2):
        refused = _second_step(api, acme, _challenge(api, acme), _code(secret, now + off * STEP))
        assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_mfa_code", off
    clock[0] = now + 1  # inside the step: drift tolerated either side
    assert _second_step(api, acme, _challenge(api, acme), _code(secret, now - STEP)).status_code == 200
    assert _second_step(api, acme, _challenge(api, acme), _code(secret, now + STEP)).status_code == 200


def test_given_a_recovery_code_when_signing_in_then_it_works_once(api, seed, clock):
    acme = seed.tenant()
    admin = api.login(acme)
    _, codes = _enrol(admin, clock)
    typed = codes[0].replace("-", "").lower()  # separators and case do not matter
    first = _second_step(api, acme, _challenge(api, acme), typed)
    assert first.status_code == 200, first.get_json()
    second = _second_step(api, acme, _challenge(api, acme), codes[0])
    assert second.status_code == 401 and second.get_json()["code"] == "invalid_mfa_code"
    assert admin.get("/auth/mfa").get_json()["recovery_codes_left"] == 9


def test_given_another_users_recovery_code_when_signing_in_then_refused(api, seed, clock):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    _, admin_codes = _enrol(api.login(acme), clock)
    _enrol(api.login(acme, "sup"), clock)
    response = _second_step(api, acme, _challenge(api, acme, "sup"), admin_codes[0])
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_mfa_code"


def test_given_a_used_challenge_when_presented_again_then_refused(api, seed, clock):
    acme = seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    challenge = _challenge(api, acme)
    clock[0] = T0 + STEP
    assert _second_step(api, acme, challenge, _code(secret, clock[0])).status_code == 200
    clock[0] = T0 + 2 * STEP
    again = _second_step(api, acme, challenge, _code(secret, clock[0]))
    assert again.status_code == 401 and again.get_json()["code"] == "invalid_mfa_challenge"


def test_given_a_challenge_when_used_as_a_bearer_token_or_forged_then_refused(api, seed, clock):
    acme = seed.tenant()
    _enrol(api.login(acme), clock)
    challenge = _challenge(api, acme)
    as_bearer = api.anonymous(acme.host).with_token(challenge)
    assert as_bearer.get(PROTECTED).get_json()["code"] == "invalid_token"
    assert as_bearer.post("/auth/refresh").get_json()["code"] == "invalid_token"
    session_token = api.login(seed.tenant()).token  # a real session token is no challenge
    forged = _second_step(api, acme, session_token, "123456")
    assert forged.status_code == 401 and forged.get_json()["code"] == "invalid_mfa_challenge"


def test_given_a_challenge_of_tenant_a_when_used_on_tenant_b_then_refused(api, seed, clock):
    acme, globex = seed.tenant(), seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    clock[0] = T0 + STEP
    response = _second_step(api, globex, _challenge(api, acme), _code(secret, clock[0]))
    assert response.status_code == 401 and response.get_json()["code"] == "tenant_mismatch"


def test_given_wrong_codes_when_guessing_then_throttled_like_passwords_and_a_right_password_does_not_forgive(
        api, seed, clock):
    acme = seed.tenant()
    secret, _ = _enrol(api.login(acme), clock)
    clock[0] = T0 + STEP
    right = _code(secret, clock[0])
    wrong = "000000" if right != "000000" else "111111"
    for _ in range(limits.LOGIN_PAIR_FREE_FAILURES):
        assert _second_step(api, acme, _challenge(api, acme), wrong).get_json()["code"] == "invalid_mfa_code"
    throttled = _second_step(api, acme, _challenge(api, acme), right)  # a fresh password step too
    assert throttled.status_code == 429 and throttled.get_json()["code"] == "too_many_login_attempts"
    assert int(throttled.headers["Retry-After"]) >= 1


def test_given_a_current_code_when_regenerating_recovery_codes_then_old_ones_stop_working(api, seed, clock):
    acme = seed.tenant()
    admin = api.login(acme)
    secret, old = _enrol(admin, clock)
    clock[0] = T0 + STEP
    response = admin.post("/auth/mfa/recovery-codes", json={"code": _code(secret, clock[0])})
    assert response.status_code == 200
    new = response.get_json()["recovery_codes"]
    assert len(new) == 10 and not set(new) & set(old)
    assert _second_step(api, acme, _challenge(api, acme), old[1]).get_json()["code"] == "invalid_mfa_code"
    assert _second_step(api, acme, _challenge(api, acme), new[1]).status_code == 200


# --- tenant requirement, admin reset ------------------------------------------------------------

def test_given_the_account_requires_mfa_when_an_unenrolled_user_logs_in_then_an_enrol_only_token_leads_to_a_session(
        api, seed, clock):
    acme = seed.tenant()
    seed.user(acme, "agent1", role="agent", agent=True)
    required = api.login(acme).put("/api/account/mfa", json={"required": True})
    assert required.status_code == 200 and required.get_json()["mfa_required"] is True

    user = acme.users["agent1"]
    login = api.anonymous(acme.host).post("/auth/login", json={"username": "agent1", "password": user.password})
    assert login.status_code == 403 and login.get_json()["code"] == "mfa_enrolment_required"
    enrolment = login.get_json()["details"]["enrolment_token"]
    restricted = api.anonymous(acme.host).with_token(enrolment)
    assert restricted.get("/api/agents").get_json()["code"] == "invalid_token"  # enrol only

    anonymous = api.anonymous(acme.host)
    started = anonymous.post("/auth/mfa/totp", json={"enrolment_token": enrolment})
    assert started.status_code == 200, started.get_json()
    secret = started.get_json()["secret"]
    confirmed = anonymous.post("/auth/mfa/totp/confirm",
                               json={"enrolment_token": enrolment, "code": _code(secret, T0)})
    assert confirmed.status_code == 200, confirmed.get_json()
    session = confirmed.get_json()["login"]
    assert session["session"] == "agent" and len(confirmed.get_json()["recovery_codes"]) == 10
    assert anonymous.with_token(session["token"]).post("/auth/refresh").status_code == 200
    # from now on: password then code
    clock[0] = T0 + STEP
    assert _second_step(api, acme, _challenge(api, acme, "agent1"), _code(secret, clock[0])).status_code == 200


def test_given_the_account_requires_mfa_when_an_unenrolled_session_refreshes_then_403(api, seed, clock):
    acme = seed.tenant()
    admin = api.login(acme)
    assert admin.put("/api/account/mfa", json={"required": True}).status_code == 200
    refused = admin.post("/auth/refresh")
    assert refused.status_code == 403 and refused.get_json()["code"] == "mfa_enrolment_required"
    _enrol(admin, clock)  # the session can still enrol
    assert admin.post("/auth/refresh").status_code == 200


def test_given_an_admin_when_resetting_a_users_mfa_then_the_user_is_signed_out_and_signs_in_with_the_password(
        api, seed, clock):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    sup = api.login(acme, "sup")
    _enrol(sup, clock)
    listed = {u["username"]: u for u in api.login(acme).get("/api/users").get_json()["items"]}
    assert listed["sup"]["mfa_enrolled"] is True and listed["admin"]["mfa_enrolled"] is False
    reset = api.login(acme).delete(f"/api/users/{acme.users['sup'].id}/mfa")
    assert reset.status_code == 204
    assert sup.get("/auth/mfa").get_json()["code"] == "token_revoked"
    again = api.login(acme, "sup")  # password alone: the account does not require a factor
    assert again.get("/auth/mfa").get_json()["totp"] == "none"


def test_given_a_non_admin_when_resetting_another_users_mfa_or_sessions_then_403(api, seed, clock):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    sup = api.login(acme, "sup")
    admin = api.login(acme)
    _enrol(admin, clock)
    for path in (f"/api/users/{acme.admin.id}/mfa", f"/api/users/{acme.admin.id}/sessions"):
        response = sup.delete(path)
        assert response.status_code == 403 and response.get_json()["code"] == "admin_required", path
    assert admin.get("/auth/mfa").get_json()["totp"] == "enrolled"


def test_given_an_admin_of_tenant_a_when_resetting_a_user_of_tenant_b_then_404(api, seed, clock):
    acme, globex = seed.tenant(), seed.tenant()
    globex_admin = api.login(globex)
    _enrol(globex_admin, clock)
    acme_admin = api.login(acme)
    for path in (f"/api/users/{globex.admin.id}/mfa", f"/api/users/{globex.admin.id}/sessions",
                 f"/api/users/{uuid.uuid4()}/mfa"):
        response = acme_admin.delete(path)
        assert response.status_code == 404 and response.get_json()["code"] == "user_not_found", path
    assert globex_admin.get("/auth/mfa").get_json()["totp"] == "enrolled"
