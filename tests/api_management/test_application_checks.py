"""The console's checks: an app_json or a flow validated without saving (every problem with its
place), and "Try it" (what `sbc webhook try` shows) for a saved application's hook."""
from __future__ import annotations

import json

from sqlalchemy import text

from app.crypto import encrypt_secret
from app.webhooks.signing import verify
from tests.api_management.helpers import admin_client, assert_error
from tests.plugins.webhook_server import Reply

SECRET = "a-signing-secret-of-some-length"


def test_given_a_bad_verb_list_when_validating_then_every_error_has_its_json_pointer(api, seed):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/applications/validate", json={"app_json": [
        {"verb": "say", "text": "hi"}, {"verb": "dial", "target": [{"type": "phone"}]}, {"verb": "dance"}]})
    assert response.status_code == 200
    verdict = response.get_json()
    assert verdict["valid"] is False
    paths = {e["path"] for e in verdict["errors"]}
    assert "/2" in paths or "/2/verb" in paths
    assert any(p.startswith("/1/target/0") for p in paths), verdict


def test_given_a_good_verb_list_when_validating_then_valid_with_the_verbs_and_nothing_is_saved(api, seed):
    _, admin = admin_client(api, seed)
    verdict = admin.post("/api/applications/validate", json={"app_json": [
        {"verb": "say", "text": "hi"}, {"verb": "queue", "name": "sales"}, {"verb": "say", "text": "never"}]}).get_json()
    assert verdict["valid"] is True and verdict["verbs"] == ["say", "queue"]
    assert verdict["warnings"] and verdict["warnings"][0]["path"].startswith("/2")
    assert admin.get("/api/applications").get_json()["items"] == []


def test_given_a_private_media_url_when_validating_then_refused_at_its_pointer(api, seed):
    _, admin = admin_client(api, seed)
    verdict = admin.post("/api/applications/validate", json={"app_json": [
        {"verb": "play", "url": "https://10.0.0.1/a.wav"}]}).get_json()
    assert verdict["valid"] is False and verdict["errors"][0]["path"] == "/0/url"


def test_given_an_unsafe_status_hook_when_saving_then_the_refusal_names_the_field(api, seed):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/applications", json={"name": "a", "call_status_hook_url": "https://10.0.0.1/s"})
    assert assert_error(response, 422, "unsafe_url")["details"]["field"] == "call_status_hook_url"


def test_given_a_flow_with_problems_when_validating_then_each_is_pinned_on_its_node(api, seed):
    _, admin = admin_client(api, seed)
    verdict = admin.post("/api/call-flows/validate", json={"definition": {"start": "a", "nodes": {
        "a": {"verb": {"verb": "say", "text": "hi"}, "next": "nowhere"},
        "b": {"verb": {"verb": "dance"}}}}}).get_json()
    assert verdict["valid"] is False
    assert {e["node"] for e in verdict["errors"]} == {"a", "b"}
    good = admin.post("/api/call-flows/validate", json={"definition": {"start": "a", "nodes": {
        "a": {"verb": {"verb": "say", "text": "hi"}}}}}).get_json()
    assert good == {"valid": True, "errors": []}


def test_given_a_flow_with_a_private_url_when_saving_then_the_refusal_points_into_the_node(api, seed):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/call-flows", json={"name": "f", "definition": {"start": "a", "nodes": {
        "a": {"verb": {"verb": "play", "url": "https://10.0.0.1/a.wav"}}}}})
    details = assert_error(response, 422, "unsafe_url")["details"]
    assert details["field"] == "definition" and details["path"] == "/nodes/a/verb/url"


def test_given_a_saved_hook_when_trying_it_then_the_server_gets_the_signed_first_request_and_the_steps_come_back(
        api, seed, hook_server, owner_engine):
    _, admin = admin_client(api, seed)
    hook_server.reply(Reply.json([{"verb": "say", "text": "Welcome"}, {"verb": "hangup"}]))
    app = admin.post("/api/applications", json={
        "name": "dev", "call_hook_url": hook_server.url("/voice"), "basic_auth_username": "u",
        "basic_auth_password": "pw-123"}).get_json()
    with owner_engine.begin() as conn:  # a secret is set through the number's answering settings only
        conn.execute(text("UPDATE applications SET signing_secret_encrypted = :s WHERE id = :i"),
                     {"s": encrypt_secret(SECRET), "i": app["id"]})
    response = admin.post(f"/api/applications/{app['id']}/try", json={"from": "15551230000"})
    assert response.status_code == 200, response.get_json()
    result = response.get_json()
    assert result["outcome"] == "accepted"
    assert result["steps"][0].startswith("say: speak 'Welcome'") and result["steps"][1] == "hangup: hang up"
    assert result["request"]["signed"] is True and result["request"]["basic_auth"] is True
    (request,) = hook_server.requests
    assert verify(request.body, SECRET, request.headers["x-signature"])
    body = json.loads(request.body)
    assert body["applicationSid"] == app["id"] and body["from"] == "15551230000"
    assert "pw-123" not in json.dumps(result) and SECRET not in json.dumps(result)


def test_given_a_rejected_reply_when_trying_then_the_errors_say_why(api, seed, hook_server):
    _, admin = admin_client(api, seed)
    hook_server.reply(Reply.json([{"verb": "dance"}]))
    app = admin.post("/api/applications", json={"name": "dev", "call_hook_url": hook_server.url("/v")}).get_json()
    result = admin.post(f"/api/applications/{app['id']}/try", json={}).get_json()
    assert result["outcome"] == "rejected" and result["errors"] and result["steps"] == []


def test_given_a_failing_hook_when_trying_then_the_failure_line_is_the_clis(api, seed, hook_server):
    _, admin = admin_client(api, seed)
    hook_server.reply(Reply(status=500, body=b"{}"))
    app = admin.post("/api/applications", json={"name": "dev", "call_hook_url": hook_server.url("/v")}).get_json()
    result = admin.post(f"/api/applications/{app['id']}/try", json={}).get_json()
    assert result["outcome"] == "failed" and result["failure"]["reason"] == "http_status"
    assert result["failure"]["line"].startswith("failed: http_status")


def test_given_no_hook_or_another_tenants_application_when_trying_then_refused(api, seed):
    _, admin = admin_client(api, seed)
    app = admin.post("/api/applications", json={"name": "static", "app_json": [{"verb": "hangup"}]}).get_json()
    assert_error(admin.post(f"/api/applications/{app['id']}/try", json={}), 409, "no_call_hook")
    _, other = admin_client(api, seed)
    assert other.post(f"/api/applications/{app['id']}/try", json={}).status_code == 404
