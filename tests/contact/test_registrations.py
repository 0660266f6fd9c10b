"""Agent SIP registrations (app/contact/registrations.py) from the switch's sofia::register /
unregister / expire events: the details kept in Redis (contact, transport, user agent, expiry,
last change), ``user.registered`` / ``user.unregistered`` published once per change however
many controllers see the event (a phone's refresh is not a change), and the registered agents
per transport for /metrics. Real Redis and PostgreSQL (the outbox)."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.contact.registrations import (
    RegistrationStore,
    RegistrationTracker,
    publish_registration_event,
    transport_of,
)
from app.contact.states import default_presence
from esl.protocol import Event
from tests.plugins.agent_rows import add_agent

CONTACT = "<sip:ag@192.0.2.10:5062;transport=tcp>"
UA = "baresip v1.0.0 (x86_64/linux)"


def _event(subclass: str, user: str, domain: str, *, contact: str = CONTACT, status: str = "Registered(TCP)",
           expires: str = "300", profile: str = "internal") -> Event:
    return Event([("Event-Name", "CUSTOM"), ("Event-Subclass", subclass), ("profile-name", profile),
                  ("from-user", user), ("from-host", domain), ("contact", contact), ("status", status),
                  ("expires", expires), ("user-agent", UA), ("Core-UUID", "core-1")])


def _agent(seed, owner_engine):
    tenant = seed.tenant()
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        agent = add_agent(db, tenant.account_id, [], f"reg{uuid.uuid4().hex[:6]}")
    return tenant, agent


def _user_events(owner_engine, account_id) -> list[tuple[str, dict]]:
    with owner_engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT routing_key, body FROM event_outbox WHERE routing_key LIKE 'user.%' "
            "AND body->>'account' = :a ORDER BY created_at"), {"a": str(account_id)}).all()
    return [(r[0], r[1]["payload"]) for r in rows]


def test_given_a_register_then_refreshes_then_an_unregister_seen_by_two_controllers_then_one_event_each_change(
        seed, owner_engine):
    tenant, agent = _agent(seed, owner_engine)
    controllers = [RegistrationTracker(default_presence(), publish_registration_event) for _ in range(2)]
    for tracker in controllers:  # the same switch event reaches every controller
        tracker.on_event(_event("sofia::register", agent.sip_username, tenant.subdomain))
    for tracker in controllers:  # the phone's refresh: same contact, not a change
        tracker.on_event(_event("sofia::register", agent.sip_username, tenant.subdomain))
    for tracker in controllers:
        tracker.on_event(_event("sofia::unregister", agent.sip_username, tenant.subdomain))
        tracker.on_event(_event("sofia::expire", agent.sip_username, tenant.subdomain))

    events = _user_events(owner_engine, tenant.account_id)
    assert [key for key, _ in events] == ["user.registered", "user.unregistered"]
    registered, unregistered = (p for _, p in events)
    assert registered["agentId"] == str(agent.id) and registered["sipUser"] == agent.sip_username
    assert (registered["contact"], registered["transport"], registered["userAgent"]) == (CONTACT, "tcp", UA)
    assert registered["registered"] is True and registered["expiresAt"]
    assert (unregistered["registered"], unregistered["reason"], unregistered["expiresAt"]) == (False, "unregistered", None)
    assert "password" not in str(events).lower()


def test_given_a_new_contact_when_the_phone_registers_again_then_it_is_a_change(seed, owner_engine):
    tenant, agent = _agent(seed, owner_engine)
    tracker = RegistrationTracker(default_presence(), publish_registration_event)
    tracker.on_event(_event("sofia::register", agent.sip_username, tenant.subdomain))
    tracker.on_event(_event("sofia::register", agent.sip_username, tenant.subdomain,
                            contact="<sip:ag@198.51.100.7:5060>", status="Registered(UDP)"))
    events = _user_events(owner_engine, tenant.account_id)
    assert [(k, p["transport"]) for k, p in events] == [("user.registered", "tcp"), ("user.registered", "udp")]


def test_given_a_registration_then_its_details_read_back_and_a_lapsed_one_shows_its_expiry_as_last_change():
    store = RegistrationStore(default_presence())
    domain, user = f"d{uuid.uuid4().hex[:6]}", "alice"
    now_ms = int(time.time() * 1000)
    assert store.registered(domain, user, 60, contact=CONTACT, transport="wss", user_agent=UA, now_ms=now_ms)
    reg = store.lookup(domain, [user])[user]
    assert (reg.registered, reg.contact, reg.transport, reg.user_agent) == (True, CONTACT, "wss", UA)
    assert reg.changed_at == datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc)
    assert abs((reg.expires_at - reg.changed_at).total_seconds() - 60) < 0.01
    store.presence.redis.delete(store.presence.reg_key(domain, user))  # lapsed, no expire event
    lapsed = store.lookup(domain, [user])[user]
    assert lapsed.registered is False and lapsed.changed_at == reg.expires_at and lapsed.expires_at is None
    assert store.lookup(domain, ["nobody"])["nobody"].registered is False


def test_given_agents_on_several_transports_then_the_counts_per_transport_follow_registrations():
    store = RegistrationStore(default_presence())
    domain = f"d{uuid.uuid4().hex[:6]}"
    before = store.counts_by_transport()
    store.registered(domain, "a", 60, transport="wss")
    store.registered(domain, "b", 60, transport="udp")
    store.registered(domain, "c", 60, transport="udp")
    store.registered(domain, "c", 60, transport="tcp")  # moved: counted once, on its new transport
    store.unregistered(domain, "b")
    store.registered(domain, "d", 1, transport="udp", now_ms=int(time.time() * 1000) - 5000)  # lapsed
    after = store.counts_by_transport()
    assert {t: after[t] - before[t] for t in ("udp", "tcp", "wss")} == {"udp": 0, "tcp": 1, "wss": 1}


def test_given_sofia_status_and_contact_then_the_transport_is_read_from_them():
    assert transport_of("Registered(WSS-NAT)", "<sip:x@h;transport=ws>") == "wss"
    assert transport_of("", "<sip:x@h:5061;transport=TLS>") == "tls"
    assert transport_of("Registered(SCTP)", "") == "other"
    assert transport_of("", "<sip:x@h>") == "udp"


def test_given_an_event_of_another_profile_then_nothing_is_recorded(seed, owner_engine):
    tenant, agent = _agent(seed, owner_engine)
    RegistrationTracker(default_presence(), publish_registration_event).on_event(
        _event("sofia::register", agent.sip_username, tenant.subdomain, profile="external"))
    assert _user_events(owner_engine, tenant.account_id) == []
