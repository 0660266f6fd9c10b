"""POST /api/calls: validation, ownership of the caller id and the application, license and
role, and the ``call.originate`` message it leaves in the outbox for a controller to dial."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from app.models import Application, PhoneNumber
from tests.api_management.helpers import admin_client, assert_error, cases, insert

DIALLED = "4915112345678"


def _owned_number_and_app(owner_engine, tenant) -> tuple[str, uuid.UUID]:
    number = "1555" + str(uuid.uuid4().int)[:7]
    app = Application(id=uuid.uuid4(), account_id=tenant.account_id, name="outbound app",
                      app_json=[{"verb": "say", "text": "hello"}])
    insert(owner_engine, app, PhoneNumber(account_id=tenant.account_id, number=number, application_id=app.id))
    return number, app.id


def test_given_owned_caller_id_and_application_when_placing_a_call_then_202_and_call_originate_is_queued(
        api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    number, app_id = _owned_number_and_app(owner_engine, tenant)

    response = admin.post("/api/calls", json={"to": "+" + DIALLED, "from": number,
                                              "applicationSid": str(app_id), "timeout": 30})

    assert response.status_code == 202, response.get_json()
    body = response.get_json()
    assert body["status"] == "queued"
    with owner_engine.connect() as conn:
        row = conn.execute(text("SELECT routing_key, body FROM event_outbox WHERE body->>'trace_id' = :t"),
                           {"t": body["traceId"]}).one()
    assert row.routing_key == "call.originate"
    envelope = row.body if isinstance(row.body, dict) else json.loads(row.body)
    assert envelope["account"] == str(tenant.account_id)
    assert {k: envelope["payload"][k] for k in ("callId", "phoneNumber", "from", "applicationSid", "timeoutSeconds")} \
        == {"callId": body["callId"], "phoneNumber": DIALLED, "from": number,
            "applicationSid": str(app_id), "timeoutSeconds": 30}


@pytest.mark.parametrize("case", cases("calls_create_bad.json"))
def test_given_an_invalid_call_request_when_placing_it_then_refused_with_a_stable_code_and_nothing_queued(
        api, seed, owner_engine, case):
    tenant, admin = admin_client(api, seed)
    number, app_id = _owned_number_and_app(owner_engine, tenant)
    body = {k: (number if v == "OWNED" else str(app_id) if v == "APP" else v) for k, v in case["body"].items()}

    response = admin.post("/api/calls", json=body)

    details = assert_error(response, case["status"], case["code"])
    if "field" in case:
        assert case["field"] in json.dumps(details)
    with owner_engine.connect() as conn:
        queued = conn.execute(text("SELECT count(*) FROM event_outbox WHERE routing_key = 'call.originate' "
                                   "AND body->>'account' = :a"), {"a": str(tenant.account_id)}).scalar()
    assert queued == 0


def test_given_another_tenants_application_when_placing_a_call_then_404(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    number, _ = _owned_number_and_app(owner_engine, tenant)
    _, foreign_app = _owned_number_and_app(owner_engine, seed.tenant())

    response = admin.post("/api/calls", json={"to": DIALLED, "from": number, "applicationSid": str(foreign_app)})

    assert_error(response, 404, "application_not_found")


def test_given_account_without_programmable_voice_when_placing_a_call_then_403_license_required(
        api, seed, owner_engine):
    tenant, admin = admin_client(api, seed, licenses=["queue-mgmt"])
    number, app_id = _owned_number_and_app(owner_engine, tenant)

    response = admin.post("/api/calls", json={"to": DIALLED, "from": number, "applicationSid": str(app_id)})

    assert_error(response, 403, "license_required")


def test_given_an_agent_session_when_placing_a_call_then_403(api, seed, owner_engine):
    tenant = seed.tenant()
    seed.user(tenant, "agent1")
    number, app_id = _owned_number_and_app(owner_engine, tenant)

    response = api.login(tenant, "agent1").post(
        "/api/calls", json={"to": DIALLED, "from": number, "applicationSid": str(app_id)})

    assert response.status_code == 403
