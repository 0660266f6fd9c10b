"""call_records + interaction_summary + usage_meters + call.ended, written from real hangup
events in one tenant transaction on the real PostgreSQL (RLS role)."""
from __future__ import annotations

import uuid
from datetime import date, datetime, timezone

import pytest
from sqlalchemy import select

from app.calls.records import CallContext, write_call_record
from app.calls.usage import PRODUCT_CALLS, PRODUCT_MINUTES
from app.db.engine import platform_session, tenant_session
from app.models import CallRecord, EventOutbox, InteractionSummary, UsageMeter
from tests.calls.captures import as_new_leg, hangup_events


def playback_hangup():
    (event,) = hangup_events("outbound_answer_playback_hangup")
    return as_new_leg(event)


def meters(account_id) -> dict[str, int]:
    with platform_session() as s:
        rows = s.execute(select(UsageMeter.product, UsageMeter.quantity, UsageMeter.period)
                         .where(UsageMeter.account_id == account_id)).all()
    assert all(r.period == date(2026, 11, 1) for r in rows)
    return {r.product: r.quantity for r in rows}


def test_given_real_hangup_when_written_then_record_summary_usage_and_event_agree(make_account):
    account = make_account()
    event = playback_hangup()
    app_id = uuid.uuid4()
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), direction="inbound",
                      application_id=app_id, has_webhook=True, tags={"campaign": "x"},
                      journey=["webhook", "play"])
    written = write_call_record(event, ctx)
    assert written is not None and written.status == "completed"

    with tenant_session(account.id) as s:
        rec = s.execute(select(CallRecord).where(CallRecord.call_id == uuid.UUID(event["Unique-ID"]))
                        ).scalar_one()
        summary = s.execute(select(InteractionSummary).where(
            InteractionSummary.trace_id == ctx.trace_id)).scalar_one()
    assert rec.public_id == written.public_id and rec.trace_id == ctx.trace_id
    assert rec.started_at == datetime(2026, 11, 21, 7, 36, 3, 758288, tzinfo=timezone.utc)
    assert rec.answered_at == datetime(2026, 11, 21, 7, 36, 4, 278298, tzinfo=timezone.utc)
    assert rec.ended_at == datetime(2026, 11, 21, 7, 36, 5, 338291, tzinfo=timezone.utc)
    assert (rec.ring_ms, rec.talk_ms, rec.duration_ms) == (520, 1060, 1580)
    assert rec.status == "completed"
    assert (rec.hangup_cause, rec.hangup_cause_q850, rec.hangup_disposition) == ("NORMAL_CLEARING", 16, "send_bye")
    assert (rec.from_number, rec.to_number, rec.direction) == ("sipp", "9001", "inbound")
    assert rec.sip_call_id == "1-10887@127.0.0.1" and str(rec.source_ip) == "127.0.0.1"
    assert rec.application_id == app_id and rec.has_webhook and not rec.has_flow
    assert rec.tags == {"campaign": "x"} and rec.journey == "webhook > play"
    # IVR-only call: the whole answered time was IVR, no talk with another party
    assert (summary.ivr_ms, summary.talk_ms, summary.hold_count, summary.abandoned) == (1060, 0, 0, False)
    assert meters(account.id) == {PRODUCT_CALLS: 1, PRODUCT_MINUTES: 1}

    with platform_session() as s:
        row = s.execute(select(EventOutbox).where(EventOutbox.id == written.event_id)).scalar_one()
    assert (row.exchange, row.routing_key) == ("call.events", "call.ended")
    body = row.body
    assert body["account"] == str(account.id) and body["trace_id"] == str(ctx.trace_id)
    payload = body["payload"]
    assert payload["callId"] == event["Unique-ID"] and payload["callRecordSid"] == str(written.public_id)
    assert payload["status"] == "completed" and payload["talkMs"] == 1060
    assert payload["startedAt"] == "2026-11-21T07:36:03.758Z"


def test_given_same_leg_written_twice_then_second_write_is_a_no_op(make_account):
    account = make_account()
    event = playback_hangup()
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4())
    first = write_call_record(event, ctx)
    assert first is not None
    assert write_call_record(event, ctx) is None
    with platform_session() as s:
        n_records = s.execute(select(CallRecord.id).where(
            CallRecord.call_id == uuid.UUID(event["Unique-ID"]))).all()
        n_events = s.execute(select(EventOutbox.id).where(
            EventOutbox.body["trace_id"].astext == str(ctx.trace_id))).all()
    assert len(n_records) == 1 and len(n_events) == 1
    assert meters(account.id)[PRODUCT_CALLS] == 1


def test_given_hold_capture_then_summary_counts_hold(make_account):
    account = make_account()
    (event,) = hangup_events("inbound_hold_unhold")
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4())
    written = write_call_record(as_new_leg(event), ctx)
    assert written.summary["hold_count"] == 1 and written.summary["hold_ms"] == 3004
    with tenant_session(account.id) as s:
        summary = s.execute(select(InteractionSummary).where(
            InteractionSummary.trace_id == ctx.trace_id)).scalar_one()
    assert (summary.hold_count, summary.hold_ms) == (1, 3004)
    # 7040 ms answered -> 1 started minute
    assert meters(account.id) == {PRODUCT_CALLS: 1, PRODUCT_MINUTES: 1}


def test_given_bridged_agent_call_then_talk_is_bridged_time_and_aht_adds_acw(make_account):
    account = make_account()
    (event,) = hangup_events("outbound_bridge")
    agent, queue = uuid.uuid4(), uuid.uuid4()
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), agent_id=agent, queue_id=queue,
                      queue_wait_ms=0, acw_ms=5000, disposition="sale")
    written = write_call_record(as_new_leg(event), ctx)
    s = written.summary
    # bridged 07:36:56.858287 -> end 07:36:59.598287 = 2740 ms of talk; answer -> bridge = 40 ms IVR
    assert s["talk_ms"] == 2740 and s["ivr_ms"] == 40
    assert s["aht_ms"] == 2740 + 5000 and not s["abandoned"]


def test_given_caller_left_queue_before_agent_then_abandoned_and_short_abandon(make_account):
    account = make_account()
    (event,) = hangup_events("outbound_caller_hangs_up")
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), queue_id=uuid.uuid4(),
                      queue_wait_ms=2000)
    written = write_call_record(as_new_leg(event), ctx)
    assert written.summary["abandoned"] and written.summary["short_abandon"]
    assert written.summary["queue_wait_ms"] == 2000


def test_given_unanswered_refused_leg_then_failed_and_no_minutes(make_account):
    account = make_account()
    refused = next(e for e in hangup_events("inbound_originate_bgapi")
                   if e.variable("answer_uepoch") == "0")
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4())
    written = write_call_record(as_new_leg(refused), ctx)
    assert written.status == "failed"
    assert meters(account.id) == {PRODUCT_CALLS: 1}


def test_given_limiter_refusal_then_record_status_refused(make_account):
    account = make_account()
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), refused=True)
    assert write_call_record(playback_hangup(), ctx).status == "refused"


def test_given_two_legs_of_one_trace_then_one_summary_accumulates(make_account):
    account = make_account()
    trace = uuid.uuid4()
    (hold,) = hangup_events("inbound_hold_unhold")
    write_call_record(as_new_leg(hold), CallContext(account_id=account.id, trace_id=trace, transfer_count=1))
    write_call_record(as_new_leg(hold), CallContext(account_id=account.id, trace_id=trace))
    with tenant_session(account.id) as s:
        rows = s.execute(select(InteractionSummary).where(InteractionSummary.trace_id == trace)).scalars().all()
    assert len(rows) == 1
    assert (rows[0].hold_count, rows[0].hold_ms, rows[0].transfer_count) == (2, 6008, 1)


def test_given_record_of_account_a_then_account_b_cannot_see_it(make_account):
    a, b = make_account(), make_account()
    event = playback_hangup()
    write_call_record(event, CallContext(account_id=a.id, trace_id=uuid.uuid4()))
    with tenant_session(b.id) as s:
        assert s.execute(select(CallRecord).where(
            CallRecord.call_id == uuid.UUID(event["Unique-ID"]))).first() is None
    with tenant_session(a.id) as s:
        assert s.execute(select(CallRecord).where(
            CallRecord.call_id == uuid.UUID(event["Unique-ID"]))).first() is not None


def test_given_context_for_other_account_then_rls_refuses_the_write(make_account):
    """The tenant transaction is scoped to ctx.account_id; a record can only land there."""
    a = make_account()
    from sqlalchemy.exc import DBAPIError

    from app.calls.records import write_in

    with pytest.raises(DBAPIError):
        with tenant_session(a.id) as s:
            write_in(s, playback_hangup(), CallContext(account_id=uuid.uuid4(), trace_id=uuid.uuid4(),
                                                       service_provider_id=uuid.uuid4()))


def test_given_the_meter_fails_after_the_record_then_nothing_of_the_leg_is_written(make_account):
    """The one-round-trip write is one transaction: the meters go last, and when they fail
    (here: an unknown service provider) the record, summary and call.ended go with them."""
    from sqlalchemy.exc import IntegrityError

    account = make_account()
    event = playback_hangup()
    ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), service_provider_id=uuid.uuid4())
    with pytest.raises(IntegrityError):
        write_call_record(event, ctx)
    with tenant_session(account.id) as s:
        assert s.execute(select(CallRecord).where(
            CallRecord.call_id == uuid.UUID(event["Unique-ID"]))).first() is None
        assert s.execute(select(InteractionSummary).where(
            InteractionSummary.trace_id == ctx.trace_id)).first() is None
    with platform_session() as s:
        assert s.execute(select(EventOutbox).where(
            EventOutbox.body["trace_id"].astext == str(ctx.trace_id))).first() is None
    assert meters(account.id) == {}
    assert write_call_record(event, CallContext(account_id=account.id, trace_id=ctx.trace_id)) is not None
