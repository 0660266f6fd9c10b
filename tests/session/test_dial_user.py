"""A ``dial`` to a ``user`` target through the whole call session, with the controller's real
directory lookup (ContactCentre over PostgreSQL): the account's own agent is bridged at
``user/<sip user>@<its subdomain>``; another tenant's SIP user is never dialled, and a dial
left with nothing fails the call with ``user_not_found`` on the record and in ``call.failed``."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.db import tenant_session
from app.models import Agent, User
from app.voice.session import CallSession
from tests.session.conftest import call_record, executed
from tests.simulator import Call


@pytest.fixture
def controller(outbound_server, services, redis_client, redis_prefix):
    services.contact = ContactCentre(Presence(redis_client, redis_prefix))  # as the controller wires it
    return outbound_server(lambda conn: CallSession(conn, services).run())


def _agent_with_credentials(account) -> str:
    sip = "ag" + uuid.uuid4().hex[:12]
    with tenant_session(account.id) as db:
        user = User(id=uuid.uuid4(), account_id=account.id, username=f"u{sip}", password_hash="x", role="agent")
        db.add(user)
        db.flush()
        db.add(Agent(id=uuid.uuid4(), account_id=account.id, user_id=user.id, sip_username=sip,
                     sip_password_encrypted=encrypt_secret("pw-123456789")))
    return sip


def _failed_reasons(owner_conn, trace_id) -> list[str]:
    return list(owner_conn.execute(text(
        "SELECT body->'payload'->>'reason' FROM event_outbox WHERE routing_key = 'call.failed' "
        "AND body->>'trace_id' = :t"), {"t": str(trace_id)}).scalars())


def test_given_a_dial_to_the_accounts_own_agent_when_the_call_runs_then_it_is_bridged_in_the_accounts_domain(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, app_id = number_with_app(app_json=[])
    sip = _agent_with_credentials(account)
    with tenant_session(account.id) as db:
        db.execute(text("UPDATE applications SET app_json = CAST(:j AS jsonb) WHERE id = :i"),
                   {"j": f'[{{"verb": "dial", "target": [{{"type": "user", "name": "{sip}"}}]}}]', "i": app_id})

    call = simulate_call(Call(callee=number).bridge_answers(talk=0.02), controller)
    assert call.wait(10)

    [bridge] = [arg for app, arg in executed(call) if app == "bridge"]
    assert bridge.endswith(f"}}user/{sip}@{account.subdomain}")
    assert call_record(owner_conn, call.uuid)["webhook_error"] is None


def test_given_a_dial_to_another_tenants_agent_when_the_call_runs_then_nothing_is_dialled_and_user_not_found(
        controller, simulate_call, number_with_app, make_account, owner_conn):
    other = make_account()
    their_sip = _agent_with_credentials(other)
    _, number, _ = number_with_app(app_json=[{"verb": "dial", "target": [{"type": "user", "name": their_sip}]}])

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10)

    assert [arg for app, arg in executed(call) if app == "bridge"] == []
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "user_not_found"
    assert _failed_reasons(owner_conn, record["trace_id"]) == ["user_not_found"]
