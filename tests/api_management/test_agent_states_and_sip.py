"""Agent state (PUT /api/agents/me/state, PUT /api/agents/:id/state) and SIP credentials
(POST /api/agents/:id/sip-credentials): agent.state.changed on every change, the idle set in
Redis in step, the password shown once and stored encrypted."""
from __future__ import annotations

from sqlalchemy import text

from app.contact.credentials import a1_hash
from app.contact.directory import DirectoryUser, render_directory
from app.contact.states import default_presence
from app.crypto import decrypt_secret
from tests.api_management.helpers import admin_client, assert_error
from tests.plugins.api import ApiClient


def _agent(api, tenant, admin, username: str) -> tuple[dict, ApiClient]:
    user = admin.post("/api/users", json={"username": username, "password": "long-enough-pass"}).get_json()
    agent = admin.post("/api/agents", json={"user_id": user["id"]}).get_json()
    login = api.anonymous(tenant.host).post("/auth/login", json={"username": username, "password": "long-enough-pass"})
    assert login.status_code == 200, login.get_json()
    return agent, ApiClient(api.client, tenant.host, login.get_json()["token"])


def _state_events(owner_engine, agent_id: str) -> list[dict]:
    with owner_engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT body FROM event_outbox WHERE routing_key = 'agent.state.changed' "
            "AND body::text LIKE :a ORDER BY created_at"), {"a": f"%{agent_id}%"}).scalars().all()
    return [row["payload"] if "payload" in row else row for row in rows]


def test_given_an_agent_when_it_sets_its_own_state_then_it_reads_back_and_agent_state_changed_is_emitted(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    agent, me = _agent(api, tenant, admin, "hana")
    changed = me.put("/api/agents/me/state", json={"state": "available"})
    assert changed.status_code == 200, changed.get_json()
    assert (changed.get_json()["state"], changed.get_json()["state_reason"]) == ("available", None)
    assert agent["id"] in default_presence().idle_agents(str(tenant.account_id))
    paused = me.put("/api/agents/me/state", json={"state": "not_ready", "reason": "lunch"}).get_json()
    assert (paused["state"], paused["state_reason"]) == ("not_ready", "lunch")
    assert agent["id"] not in default_presence().idle_agents(str(tenant.account_id))
    events = _state_events(owner_engine, agent["id"])
    assert [(e["state"], e["previousState"], e["reason"]) for e in events] == \
        [("available", "offline", None), ("not_ready", "available", "lunch")]


def test_given_an_admin_when_setting_any_agent_state_then_it_applies_and_an_unknown_state_is_422(api, seed):
    tenant, admin = admin_client(api, seed)
    agent, me = _agent(api, tenant, admin, "ivan")
    assert admin.put(f"/api/agents/{agent['id']}/state", json={"state": "wrap_up"}).get_json()["state"] == "wrap_up"
    assert_error(admin.put(f"/api/agents/{agent['id']}/state", json={"state": "busy"}), 422, "validation_failed")
    assert_error(me.put(f"/api/agents/{agent['id']}/state", json={"state": "available"}), 403, "admin_required")
    _, other_admin = admin_client(api, seed)
    assert_error(other_admin.put(f"/api/agents/{agent['id']}/state", json={"state": "available"}), 404, "not_found")


def test_given_a_user_who_is_not_an_agent_when_setting_my_state_then_404_not_an_agent(api, seed):
    _, admin = admin_client(api, seed)
    assert_error(admin.put("/api/agents/me/state", json={"state": "available"}), 404, "not_an_agent")


def test_given_sip_credentials_when_generated_then_the_password_is_shown_once_and_stored_encrypted(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    agent, _ = _agent(api, tenant, admin, "jade")
    made = admin.post(f"/api/agents/{agent['id']}/sip-credentials")
    assert made.status_code == 201, made.get_json()
    creds = made.get_json()
    assert creds["sip_domain"] == tenant.subdomain and creds["sip_username"].startswith("ag")
    assert "sip_password" not in admin.get(f"/api/agents/{agent['id']}").get_json()
    assert admin.get(f"/api/agents/{agent['id']}").get_json()["sip_username"] == creds["sip_username"]
    with owner_engine.connect() as conn:
        stored = conn.execute(text("SELECT sip_password_encrypted FROM agents WHERE id = :i"),
                              {"i": agent["id"]}).scalar_one()
        announced = conn.execute(text(
            "SELECT count(*) FROM event_outbox WHERE routing_key = 'routing.config.changed' "
            "AND body::text LIKE :a"), {"a": f"%{agent['id']}%"}).scalar_one()
    assert creds["sip_password"] not in stored and decrypt_secret(stored) == creds["sip_password"]
    assert announced == 1
    again = admin.post(f"/api/agents/{agent['id']}/sip-credentials").get_json()
    assert again["sip_username"] == creds["sip_username"] and again["sip_password"] != creds["sip_password"]


def test_given_agents_of_two_accounts_when_the_directory_is_rendered_then_each_domain_holds_only_its_a1_hashes():
    import uuid

    from app.crypto import encrypt_secret

    users = [DirectoryUser(uuid.uuid4(), uuid.uuid4(), "acme", "ag1", encrypt_secret("pw-one")),
             DirectoryUser(uuid.uuid4(), uuid.uuid4(), "zeta", "ag2", encrypt_secret("pw-two"))]
    xml = render_directory(users)
    acme = xml.split('<domain name="acme">')[1].split("</domain>")[0]
    assert a1_hash("ag1", "acme", "pw-one") in acme and "ag2" not in acme
    assert "pw-one" not in xml and "pw-two" not in xml
