"""A queue verb naming a queue the account does not have ends the call as a failure
(docs/verbs.md "queue"): the record's webhook_error and call.failed say queue_not_found."""
from __future__ import annotations

from sqlalchemy import text

from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from tests.session.conftest import call_record, hangups, outbox_keys
from tests.simulator import Call


def test_given_an_unknown_queue_name_when_a_call_queues_then_it_fails_queue_not_found_on_the_record_and_event(
        controller, simulate_call, number_with_app, owner_conn, services, redis_client, redis_prefix):
    services.contact = ContactCentre(Presence(redis_client, redis_prefix))
    _, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "nobody-configured-this"}])
    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10), "simulated call did not finish"
    assert hangups(call)
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "queue_not_found"
    keys = outbox_keys(owner_conn, record["trace_id"])
    assert "queue.caller.enqueued" not in keys and keys[-1] == "call.ended"
    failed = owner_conn.execute(text(
        "SELECT body FROM event_outbox WHERE routing_key = 'call.failed' AND body->>'trace_id' = :t"),
        {"t": str(record["trace_id"])}).scalar_one()
    assert failed["payload"]["reason"] == "queue_not_found"
