"""A whole call through the controller's session (the simulator as FreeSWITCH): the queue verb
with a caller priority joins ahead of earlier callers, and a caller who hangs up sooner than the
queue's short_abandon_seconds is a short abandon (docs/agents.md "Abandons")."""
from __future__ import annotations

import uuid

from sqlalchemy import text

from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.db import tenant_session
from app.models import Queue
from tests.session.conftest import call_record
from tests.simulator import Call


def _payload(owner_conn, trace_id, key: str) -> dict:
    return owner_conn.execute(text(
        "SELECT body FROM event_outbox WHERE routing_key = :k AND body->>'trace_id' = :t"),
        {"k": key, "t": str(trace_id)}).scalar_one()["payload"]


def test_given_a_priority_caller_who_hangs_up_soon_then_it_was_first_in_line_and_its_abandon_is_short(
        controller, simulate_call, number_with_app, owner_conn, services, redis_client, redis_prefix):
    presence = Presence(redis_client, redis_prefix)
    services.contact = ContactCentre(presence)
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "vip", "priority": 10}])
    with tenant_session(account.id) as db:
        db.add(Queue(id=uuid.uuid4(), account_id=account.id, name="vip", short_abandon_seconds=30,
                     announce_position=False))
    for n in range(3):  # three callers already waiting, no agent
        presence.join(str(account.id), "vip", f"earlier-{n}")
    call = simulate_call(Call(callee=number).hangup_after(1.0), controller)
    assert call.wait(10), "simulated call did not finish"
    record = call_record(owner_conn, call.uuid)
    assert _payload(owner_conn, record["trace_id"], "queue.caller.enqueued")["position"] == 1
    abandoned = _payload(owner_conn, record["trace_id"], "queue.caller.abandoned")
    assert abandoned["shortAbandon"] is True and abandoned["reason"] == "hangup"
    assert presence.waiting(str(account.id), "vip") == 3  # it left the line
