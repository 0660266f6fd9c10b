"""``GET /api/agents[/:id]`` shows each agent's SIP registration as the switch reported it
(contact, transport, user agent, expiry, last change), never its SIP password."""
from __future__ import annotations

from app.contact.registrations import RegistrationTracker
from app.contact.states import default_presence
from esl.protocol import Event
from tests.api_management.helpers import admin_client

CONTACT = "<sip:x@127.0.0.1:40123;transport=ws>"


def _register(subclass: str, user: str, domain: str) -> None:
    RegistrationTracker(default_presence()).on_event(Event([
        ("Event-Name", "CUSTOM"), ("Event-Subclass", subclass), ("profile-name", "internal"),
        ("from-user", user), ("from-host", domain), ("contact", CONTACT), ("status", "Registered(WSS-NAT)"),
        ("expires", "120"), ("user-agent", "JsSIP 3.10.1")]))


def test_given_an_agent_phone_registered_then_the_agent_shows_contact_transport_user_agent_expiry_and_last_change(
        api, seed):
    tenant, admin = admin_client(api, seed)
    user = admin.post("/api/users", json={"username": "reggie", "password": "long-enough-pass"}).get_json()
    agent = admin.post("/api/agents", json={"user_id": user["id"]}).get_json()
    assert agent["registration"] == {"registered": False, "contact": None, "transport": None,
                                     "user_agent": None, "expires_at": None, "changed_at": None}
    creds = admin.post(f"/api/agents/{agent['id']}/sip-credentials").get_json()

    _register("sofia::register", creds["sip_username"], creds["sip_domain"])
    shown = admin.get(f"/api/agents/{agent['id']}").get_json()["registration"]
    assert (shown["registered"], shown["contact"], shown["transport"], shown["user_agent"]) == \
        (True, CONTACT, "wss", "JsSIP 3.10.1")
    assert shown["expires_at"] > shown["changed_at"]
    [listed] = [a for a in admin.get("/api/agents").get_json()["items"] if a["id"] == agent["id"]]
    assert listed["registration"] == shown
    assert creds["sip_password"] not in str(listed)

    _register("sofia::unregister", creds["sip_username"], creds["sip_domain"])
    gone = admin.get(f"/api/agents/{agent['id']}").get_json()["registration"]
    assert (gone["registered"], gone["expires_at"], gone["contact"]) == (False, None, CONTACT)
    assert gone["changed_at"] >= shown["changed_at"]
