"""/api/api-keys: license api-access; create needs api_keys.create, revoke api_keys.delete."""
from __future__ import annotations

import base64
import hashlib
import re
import uuid

import pytest
from sqlalchemy import select

from app import limits
from app.models.users import ApiKey
from tests.api.fixtures import cases

KEYS = "/api/api-keys"


def _stored(owner_engine, key_id):
    from sqlalchemy.orm import Session

    with Session(owner_engine) as db:
        return db.scalar(select(ApiKey).where(ApiKey.id == uuid.UUID(key_id)))


def test_given_an_admin_when_creating_a_key_then_it_is_shown_once_and_only_its_hash_is_stored(api, seed, owner_engine):
    acme = seed.tenant()
    admin = api.login(acme)
    response = admin.post(KEYS, json={"name": "crm", "scopes": ["calls", "recordings"]})
    assert response.status_code == 201
    body = response.get_json()
    key = body["key"]
    assert re.fullmatch(r"sk_[A-Za-z0-9_-]{43}", key)
    assert len(base64.urlsafe_b64decode(key[3:] + "=")) == limits.API_KEY_RANDOM_BYTES
    assert body["display_prefix"] == key[:10] and len(body["display_prefix"]) == 10
    assert body["scopes"] == ["calls", "recordings"] and body["name"] == "crm"
    assert body["created_by"] == str(acme.admin.id) and body["revoked_at"] is None
    row = _stored(owner_engine, body["id"])
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert row.account_id == acme.account_id
    listed = admin.get(KEYS).get_json()
    assert [k["id"] for k in listed] == [body["id"]]
    assert "key" not in listed[0] and "key_hash" not in listed[0]
    assert key not in admin.get(KEYS).get_data(as_text=True)


def test_given_two_creates_when_comparing_keys_then_they_differ(api, seed):
    admin = api.login(seed.tenant())
    first = admin.post(KEYS, json={}).get_json()["key"]
    second = admin.post(KEYS, json={}).get_json()["key"]
    assert first != second


@pytest.mark.parametrize("case", cases("api_keys_create_good.json"))
def test_given_a_valid_create_body_when_creating_then_201(api, seed, case):
    admin = api.login(seed.tenant())
    response = admin.post(KEYS, json=case["body"])
    assert response.status_code == 201, response.get_json()
    if "expect_scopes" in case:
        assert response.get_json()["scopes"] == case["expect_scopes"]


@pytest.mark.parametrize("case", cases("api_keys_create_bad.json"))
def test_given_an_invalid_create_body_when_creating_then_422_names_the_field(api, seed, case):
    admin = api.login(seed.tenant())
    response = admin.post(KEYS, json=case["body"])
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "validation_failed" and case["field"] in body["details"]["json"]
    assert admin.get(KEYS).get_json() == []


def test_given_more_scopes_than_allowed_when_creating_then_422(api, seed):
    admin = api.login(seed.tenant())
    response = admin.post(KEYS, json={"scopes": [f"s{i}" for i in range(33)]})
    assert response.status_code == 422 and "scopes" in response.get_json()["details"]["json"]


def test_given_a_key_when_revoking_then_204_it_leaves_the_list_and_revoking_again_is_a_no_op(api, seed, owner_engine):
    admin = api.login(seed.tenant())
    key_id = admin.post(KEYS, json={}).get_json()["id"]
    assert admin.delete(f"{KEYS}/{key_id}").status_code == 204
    assert admin.get(KEYS).get_json() == []
    revoked = admin.get(KEYS, query_string={"include_revoked": "true"}).get_json()
    assert [k["id"] for k in revoked] == [key_id] and revoked[0]["revoked_at"] is not None
    first_revocation = _stored(owner_engine, key_id).revoked_at
    assert admin.delete(f"{KEYS}/{key_id}").status_code == 204
    assert _stored(owner_engine, key_id).revoked_at == first_revocation


def test_given_an_unknown_or_malformed_key_id_when_revoking_then_404(api, seed):
    admin = api.login(seed.tenant())
    response = admin.delete(f"{KEYS}/{uuid.uuid4()}")
    assert response.status_code == 404 and response.get_json()["code"] == "api_key_not_found"
    response = admin.delete(f"{KEYS}/not-a-uuid")
    assert response.status_code == 404 and response.get_json()["code"] == "not_found"


def test_given_a_bad_list_query_when_listing_then_422(api, seed):
    admin = api.login(seed.tenant())
    response = admin.get(KEYS, query_string={"include_revoked": "maybe"})
    assert response.status_code == 422 and "include_revoked" in response.get_json()["details"]["query"]


# --- licenses and permissions --------------------------------------------------------------

@pytest.mark.parametrize(("method", "path_suffix"), [("GET", ""), ("POST", ""), ("DELETE", "/{id}")])
def test_given_an_account_without_api_access_when_using_keys_then_403_license_required(api, seed, method, path_suffix):
    acme = seed.tenant(licenses=["queue-mgmt"])
    admin = api.login(acme)
    path = KEYS + path_suffix.format(id=uuid.uuid4())
    response = admin.request(method, path, json={} if method == "POST" else None)
    assert response.status_code == 403
    assert response.get_json() == {"code": "license_required",
                                   "message": "The account has no 'api-access' license.",
                                   "details": {"license": "api-access"}}


def test_given_a_license_removed_after_login_when_listing_then_403_at_once(api, seed):
    acme = seed.tenant()
    admin = api.login(acme)
    assert admin.get(KEYS).status_code == 200
    seed.set_licenses(acme, ["queue-mgmt"])
    response = admin.get(KEYS)
    assert response.status_code == 403 and response.get_json()["code"] == "license_required"


def test_given_a_user_without_create_permission_when_creating_then_403_permission_denied(api, seed):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor", permissions=["api_keys.delete"])
    sup = api.login(acme, "sup")
    assert sup.get(KEYS).status_code == 200  # listing needs only the license
    response = sup.post(KEYS, json={"scopes": ["calls"]})
    assert response.status_code == 403
    assert response.get_json()["code"] == "permission_denied"
    assert response.get_json()["details"] == {"permission": "api_keys.create"}


def test_given_a_user_without_create_permission_when_posting_an_invalid_body_then_403_not_422(api, seed):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    response = api.login(acme, "sup").post(KEYS, json={"scopes": "nope"})
    assert response.status_code == 403 and response.get_json()["code"] == "permission_denied"


def test_given_a_user_without_delete_permission_when_revoking_then_403_and_the_key_stays(api, seed):
    acme = seed.tenant()
    seed.user(acme, "maker", role="supervisor", permissions=["api_keys.create"])
    maker = api.login(acme, "maker")
    key_id = maker.post(KEYS, json={}).get_json()["id"]
    response = maker.delete(f"{KEYS}/{key_id}")
    assert response.status_code == 403 and response.get_json()["details"] == {"permission": "api_keys.delete"}
    assert [k["id"] for k in maker.get(KEYS).get_json()] == [key_id]


def test_given_a_permission_granted_after_login_when_creating_then_it_applies_at_once(api, seed):
    acme = seed.tenant()
    seed.user(acme, "sup", role="supervisor")
    sup = api.login(acme, "sup")
    assert sup.post(KEYS, json={}).status_code == 403
    seed.set_user(acme, "sup", permissions=["api_keys.create"])
    assert sup.post(KEYS, json={}).status_code == 201


# --- cross-tenant ---------------------------------------------------------------------------

def test_given_tenant_b_when_listing_or_revoking_tenant_a_keys_then_it_sees_nothing_and_gets_404(api, seed, owner_engine):
    acme, globex = seed.tenant(), seed.tenant()
    a_admin, b_admin = api.login(acme), api.login(globex)
    a_key = a_admin.post(KEYS, json={"name": "acme-only"}).get_json()["id"]
    assert b_admin.get(KEYS, query_string={"include_revoked": "true"}).get_json() == []
    response = b_admin.delete(f"{KEYS}/{a_key}")
    assert response.status_code == 404 and response.get_json()["code"] == "api_key_not_found"
    assert _stored(owner_engine, a_key).revoked_at is None
    # tenant A's token cannot be replayed on B's host to reach A's keys from there
    response = a_admin.on_host(globex.host).delete(f"{KEYS}/{a_key}")
    assert response.status_code == 401 and response.get_json()["code"] == "tenant_mismatch"
    assert _stored(owner_engine, a_key).revoked_at is None
