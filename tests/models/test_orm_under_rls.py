"""The models work through the production session scopes (tenant_session as sbc_app), including
the tables where the API role has narrow grants."""
from __future__ import annotations

import uuid
from datetime import date, datetime, timezone

import pytest
from sqlalchemy import delete, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import ProgrammingError

from app.db.engine import platform_session, tenant_session
from app.models import (
    Account,
    CallRecord,
    ComplianceAccessLog,
    EventOutbox,
    PhoneNumber,
    Queue,
    UsageMeter,
    User,
)
from tests.plugins.database import unique_number


def test_given_two_tenants_when_querying_with_tenant_session_then_orm_sees_only_own_rows(make_account):
    a, b = make_account(), make_account()
    with tenant_session(a.id) as s:
        s.add(Queue(account_id=a.id, name="support"))
    with tenant_session(b.id) as s:
        s.add(Queue(account_id=b.id, name="support"))
    with tenant_session(a.id) as s:
        assert s.scalars(select(Queue.account_id)).all() == [a.id]
        assert s.scalars(select(Account.id)).all() == [a.id]
        assert [u.username for u in s.scalars(select(User))] == [a.admin_username]


def test_given_tenant_session_when_adding_a_call_record_then_identity_and_public_id_are_returned(make_account):
    a = make_account()
    with tenant_session(a.id) as s:
        record = CallRecord(
            account_id=a.id, trace_id=uuid.uuid4(), call_id=uuid.uuid4(), direction="outbound",
            started_at=datetime.now(timezone.utc), status="no-answer", tags={"k": "v"},
        )
        s.add(record)
        s.flush()
        assert isinstance(record.id, int) and record.public_id is not None
        assert record.has_recording is False


def test_given_tenant_session_when_writing_outbox_and_audit_rows_then_narrow_grants_suffice(make_account):
    a = make_account()
    event_id = uuid.uuid4()
    with tenant_session(a.id) as s:
        s.add(EventOutbox(id=event_id, exchange="system.events", routing_key="agent.state.changed", body={"x": 1}))
        s.add(ComplianceAccessLog(account_id=a.id, user_id=a.admin_user_id, action="call_records.export",
                                  filters={"direction": "inbound"}, row_count=3, remote_addr="192.0.2.4"))
    with platform_session() as s:
        assert s.get(EventOutbox, event_id).published_at is None
        assert s.scalar(select(func.count()).select_from(ComplianceAccessLog).where(ComplianceAccessLog.account_id == a.id)) == 1
    with pytest.raises(ProgrammingError, match="permission denied"):
        with tenant_session(a.id) as s:
            s.execute(text("SELECT * FROM event_outbox"))
    with platform_session() as s:  # not an envelope: no publisher of a later test should see it
        s.execute(delete(EventOutbox).where(EventOutbox.id == event_id))


def test_given_tenant_session_when_upserting_usage_meter_then_quantity_accumulates(make_account):
    a = make_account()
    period = date(2026, 11, 1)
    stmt = insert(UsageMeter).values(
        id=uuid.uuid4(), account_id=a.id, service_provider_id=a.service_provider_id,
        product="voice-minutes", period=period, quantity=2,
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["account_id", "product", "period"], set_={"quantity": UsageMeter.quantity + stmt.excluded.quantity}
    )
    for _ in range(2):
        with tenant_session(a.id) as s:
            s.execute(stmt)
    with tenant_session(a.id) as s:
        assert s.scalar(select(UsageMeter.quantity)) == 4


def test_given_number_owned_by_one_tenant_when_another_adds_it_then_unique_violation(make_account):
    from sqlalchemy.exc import IntegrityError

    a, b = make_account(), make_account()
    number = unique_number()
    with tenant_session(a.id) as s:
        s.add(PhoneNumber(account_id=a.id, number=number))
    with pytest.raises(IntegrityError, match="uq_phone_numbers_number"):
        with tenant_session(b.id) as s:
            s.add(PhoneNumber(account_id=b.id, number=number))


@pytest.mark.parametrize("bad", ["+15551234", "555-1234", "", "12a4"])
def test_given_non_digit_number_when_saving_then_check_constraint_refuses(make_account, bad):
    from sqlalchemy.exc import IntegrityError

    a = make_account()
    with pytest.raises(IntegrityError, match="ck_phone_numbers_number_digits"):
        with tenant_session(a.id) as s:
            s.add(PhoneNumber(account_id=a.id, number=bad))
