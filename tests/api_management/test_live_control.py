"""POST /api/calls/:callId/actions at the API's edge: who may act (admin session, licence
``programmable-voice``, API keys with the ``call_control`` scope), which calls (this tenant's
live ones: the live-call registry key), the body's validation, and the answer when the call's
controller is not listening. The controller's side is tests/session/test_live_control.py."""
from __future__ import annotations

import time
import uuid

import pytest

from app.calls import live_calls
from tests.api_management.helpers import admin_client, assert_error

HANGUP = {"action": "hangup"}


def register(redis_client, prefix, tenant, controller_id="nobody-listens") -> str:
    call_id = str(uuid.uuid4())
    live_calls.register(redis_client, prefix, call_id, tenant.account_id, controller_id)
    return call_id


def path(call_id) -> str:
    return f"/api/calls/{call_id}/actions"


def test_an_unknown_call_is_404_call_not_found(api, seed):
    _, admin = admin_client(api, seed)
    assert_error(admin.post(path(uuid.uuid4()), json=HANGUP), 404, "call_not_found")


def test_another_tenants_live_call_is_404_like_an_unknown_one(api, seed, redis_client, redis_prefix):
    other = seed.tenant()
    call_id = register(redis_client, redis_prefix, other)
    _, admin = admin_client(api, seed)
    assert_error(admin.post(path(call_id), json=HANGUP), 404, "call_not_found")


def test_a_live_call_whose_controller_is_gone_is_503_call_control_unavailable(api, seed, redis_client, redis_prefix):
    tenant, admin = admin_client(api, seed)
    call_id = register(redis_client, redis_prefix, tenant)
    started = time.monotonic()
    assert_error(admin.post(path(call_id), json=HANGUP), 503, "call_control_unavailable")
    assert time.monotonic() - started < 1.0  # nobody subscribed: known at once, no wait


@pytest.mark.parametrize("body, field", [
    ({"action": "explode"}, "action"),
    ({}, "action"),
    ({"action": "dtmf"}, "digits"),
    ({"action": "dtmf", "digits": "12x"}, "digits"),
    ({"action": "dtmf", "digits": "1" * 33}, "digits"),
    ({"action": "hangup", "reason": "has spaces"}, "reason"),
    ({"action": "hangup", "digits": "1"}, "digits"),
    ({"action": "mute", "verbs": []}, "verbs"),
    ({"action": "redirect"}, "verbs"),
    ({"action": "redirect", "verbs": [{"verb": "say", "text": "x"}], "hookUrl": "https://8.8.8.8/x"}, "verbs"),
    ({"action": "redirect", "hookUrl": "ftp://example.com/x"}, "hookUrl"),
    ({"action": "hangup", "surprise": 1}, "surprise"),
    ({"action": "whisper", "url": "http://example.com/a.wav"}, "url"),
    ({"action": "whisper", "url": "https://example.com/a b.wav"}, "url"),
    ({"action": "whisper", "url": "https://example.com/a.wav", "text": "Hi"}, "url"),
    ({"action": "whisper"}, "text"),
    ({"action": "transfer"}, "target"),
    ({"action": "transfer", "target": {"type": "pstn", "number": "+15551230000"}}, "target"),
    ({"action": "transfer", "target": {"type": "number", "number": "12ab"}}, "target"),
    ({"action": "transfer", "target": {"type": "sip", "uri": "http://example.com/x"}}, "target"),
    ({"action": "transfer", "target": {"type": "agent", "agentId": "ana"}}, "target"),
    ({"action": "hangup", "target": {"type": "queue", "name": "support"}}, "target"),
], ids=lambda v: str(v)[:40])
def test_an_invalid_body_is_refused_before_the_call_is_looked_up(api, seed, body, field):
    _, admin = admin_client(api, seed)
    response = admin.post(path(uuid.uuid4()), json=body)
    assert response.status_code == 422, response.get_json()
    assert field in str(response.get_json())


def test_a_redirect_with_an_invalid_verb_list_is_422_with_the_verbs_errors(api, seed, redis_client, redis_prefix):
    tenant, admin = admin_client(api, seed)
    call_id = register(redis_client, redis_prefix, tenant)
    response = admin.post(path(call_id), json={"action": "redirect", "verbs": [{"verb": "dance"}]})
    assert response.status_code == 422, response.get_json()
    assert "dance" in str(response.get_json())


def test_without_the_programmable_voice_licence_403(api, seed):
    _, admin = admin_client(api, seed, licenses=["api-access"])
    response = admin.post(path(uuid.uuid4()), json=HANGUP)
    assert response.status_code == 403


def test_a_non_admin_user_is_403_admin_required(api, seed):
    tenant = seed.tenant()
    seed.user(tenant, "agent1")
    agent = api.login(tenant, "agent1")
    assert agent.post(path(uuid.uuid4()), json=HANGUP).status_code == 403


def test_an_api_key_needs_the_call_control_scope(api, seed, redis_client, redis_prefix):
    tenant, admin = admin_client(api, seed)
    calls_only = admin.post("/api/api-keys", json={"scopes": ["calls"]}).get_json()["key"]
    control = admin.post("/api/api-keys", json={"scopes": ["call_control"]}).get_json()["key"]
    anonymous = api.anonymous(tenant.host)
    refused = anonymous.post(path(uuid.uuid4()), json=HANGUP, headers={"X-API-Key": calls_only})
    assert_error(refused, 403, "scope_required")
    allowed = anonymous.post(path(uuid.uuid4()), json=HANGUP, headers={"X-API-Key": control})
    assert_error(allowed, 404, "call_not_found")  # past the scope check
