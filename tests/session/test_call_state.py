"""GET /api/calls/:callId end to end: POST /api/calls writes call.originate, the controller's
originator takes that very envelope from the outbox and dials it on the simulated switch, and
the API reports queued -> ringing -> in-progress -> completed, or failed with the reason that
is also the call record's hangup_reason; records are found by call id."""
from __future__ import annotations

import dataclasses
import time
import uuid
from datetime import datetime, timezone

import gevent
from sqlalchemy import text

from app.calls.call_state import state_key
from app.events.envelope import Envelope, rfc3339
from app.models import Application, PhoneNumber
from app.settings import get_settings
from app.voice.originator import Originator
from tests.api_management.helpers import insert
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan


def _placed(api, seed, owner_engine, originator, *, routed: bool = True):
    """(admin client, tenant, caller id, 202 body) for a call placed through the API."""
    tenant = seed.tenant()
    admin = api.login(tenant)
    number = "1555" + str(uuid.uuid4().int)[:7]
    app = Application(id=uuid.uuid4(), account_id=tenant.account_id, name="outbound",
                      app_json=[{"verb": "say", "text": "hi"}])
    insert(owner_engine, app, PhoneNumber(account_id=tenant.account_id, number=number, application_id=app.id))
    if routed:
        two_carrier_plan(tenant.account_id)
        originator.services.routing.reload()
    response = admin.post("/api/calls", json={"to": GERMAN_NUMBER, "from": number,
                                              "applicationSid": str(app.id), "timeout": 20})
    assert response.status_code == 202, response.get_json()
    return admin, tenant, number, response.get_json()


def _envelope(owner_engine, trace_id: str) -> Envelope:
    with owner_engine.connect() as conn:
        body = conn.execute(text("SELECT body FROM event_outbox WHERE routing_key = 'call.originate' "
                                 "AND body->>'trace_id' = :t"), {"t": trace_id}).scalar_one()
    return Envelope.from_dict(body)


def _state(admin, call_id: str) -> dict:
    response = admin.get(f"/api/calls/{call_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_given_a_placed_call_when_dialled_and_answered_then_queued_ringing_in_progress_completed(
        api, seed, owner_engine, owner_conn, dialling, inbound_sim):
    originator, _ = dialling
    admin, _, _, placed = _placed(api, seed, owner_engine, originator)
    call_id = placed["callId"]
    assert _state(admin, call_id)["state"] == "queued"

    inbound_sim.bgapi_delay = 1.0  # the switch takes a second to answer the originate
    job = gevent.spawn(originator.handle, _envelope(owner_engine, placed["traceId"]))
    eventually(lambda: _state(admin, call_id)["state"] == "ringing", what="the call ringing")
    assert job.get(timeout=10) is None
    assert _state(admin, call_id)["state"] in ("in-progress", "completed")
    eventually(lambda: call_record(owner_conn, call_id) is not None, what="the call record")
    final = _state(admin, call_id)
    assert (final["state"], final["reason"], final["record_status"]) == ("completed", None, "completed")
    found = admin.get("/api/call-records", query_string={"call_id": call_id}).get_json()["items"]
    assert [r["id"] for r in found] == [final["call_record_id"]]


def test_given_a_busy_callee_when_dialled_then_failed_busy_on_the_state_and_the_record(
        api, seed, owner_engine, owner_conn, dialling, inbound_sim):
    originator, _ = dialling
    admin, _, _, placed = _placed(api, seed, owner_engine, originator)
    inbound_sim.originate_fails = "USER_BUSY"

    originator.handle(_envelope(owner_engine, placed["traceId"]))

    state = _state(admin, placed["callId"])
    assert (state["state"], state["reason"], state["hangup_cause"]) == ("failed", "busy", "USER_BUSY")
    assert call_record(owner_conn, placed["callId"])["hangup_reason"] == "busy"


def test_given_no_answer_when_dialled_then_failed_no_answer(api, seed, owner_engine, dialling, inbound_sim):
    originator, _ = dialling
    admin, _, _, placed = _placed(api, seed, owner_engine, originator)
    inbound_sim.originate_fails = "NO_ANSWER"

    originator.handle(_envelope(owner_engine, placed["traceId"]))

    assert (_state(admin, placed["callId"])["state"], _state(admin, placed["callId"])["reason"]) \
        == ("failed", "no_answer")


def test_given_no_route_when_dialled_then_failed_no_route(api, seed, owner_engine, owner_conn, dialling, inbound_sim):
    originator, _ = dialling
    admin, _, _, placed = _placed(api, seed, owner_engine, originator, routed=False)

    originator.handle(_envelope(owner_engine, placed["traceId"]))

    assert inbound_sim.originates == []
    state = _state(admin, placed["callId"])
    assert (state["state"], state["reason"]) == ("failed", "no_route")
    assert call_record(owner_conn, placed["callId"])["hangup_reason"] == "no_route"


def test_given_no_switch_connected_when_dialled_then_failed_no_freeswitch(
        api, seed, owner_engine, owner_conn, dialling, inbound_sim):
    originator, server = dialling
    lonely = Originator(originator.services, lambda: [], lambda: server.address)
    admin, _, _, placed = _placed(api, seed, owner_engine, originator)

    lonely.handle(_envelope(owner_engine, placed["traceId"]))

    state = _state(admin, placed["callId"])
    assert (state["state"], state["reason"]) == ("failed", "no_freeswitch")
    assert call_record(owner_conn, placed["callId"])["hangup_reason"] == "no_freeswitch"


def test_given_no_controller_takes_the_call_in_time_then_failed_no_freeswitch_and_never_dialled_later(
        api, seed, owner_engine, owner_conn, redis_client, dialling, inbound_sim):
    originator, _ = dialling
    admin, _, _, placed = _placed(api, seed, owner_engine, originator)
    long_ago = time.time() - 31
    redis_client.hset(state_key(get_settings().redis_key_prefix, placed["callId"]), "queued", f"{long_ago:.3f}")

    state = _state(admin, placed["callId"])
    assert (state["state"], state["reason"], state["call_record_id"]) == ("failed", "no_freeswitch", None)

    late = dataclasses.replace(_envelope(owner_engine, placed["traceId"]),
                               occurred_at=rfc3339(datetime.fromtimestamp(long_ago, timezone.utc)))
    originator.handle(late)  # a controller that starts late must not ring the phone now
    assert inbound_sim.originates == []
    record = call_record(owner_conn, placed["callId"])
    assert record["hangup_reason"] == "no_freeswitch"
    assert _state(admin, placed["callId"])["call_record_id"] == str(record["public_id"])


def test_given_the_caller_id_removed_before_dialling_then_failed_caller_id_not_owned(
        api, seed, owner_engine, dialling, inbound_sim):
    originator, _ = dialling
    admin, tenant, number, placed = _placed(api, seed, owner_engine, originator)
    with owner_engine.begin() as conn:
        conn.execute(text("DELETE FROM phone_numbers WHERE number = :n"), {"n": number})

    originator.handle(_envelope(owner_engine, placed["traceId"]))

    assert inbound_sim.originates == []
    assert _state(admin, placed["callId"])["reason"] == "caller_id_not_owned"


def test_given_another_tenants_or_an_unknown_call_id_then_404_call_not_found(api, seed, owner_engine, dialling):
    originator, _ = dialling
    _, _, _, placed = _placed(api, seed, owner_engine, originator)
    stranger = api.login(seed.tenant())
    for call_id in (placed["callId"], str(uuid.uuid4())):
        response = stranger.get(f"/api/calls/{call_id}")
        assert response.status_code == 404 and response.get_json()["code"] == "call_not_found"
