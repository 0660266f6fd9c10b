"""The agent's ownership window (interaction_segment) and the summary's after-call work,
whatever the order of the call record write, the end of wrap-up and the agent's disposition
(real hang-up capture, real PostgreSQL as the RLS role)."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.calls.hangup import read_hangup
from app.calls.records import CallContext, write_call_record
from app.contact.interactions import after_call_work_over, open_segment, set_disposition
from app.db.engine import tenant_session
from app.models import InteractionSegment, InteractionSummary
from tests.calls.captures import as_new_leg, hangup_events

TALK_MS = 2740  # the outbound_bridge capture: bridged 07:36:56.858287 -> end 07:36:59.598287


def _agent_call(account_id, *, opened: bool = True):
    (event,) = hangup_events("outbound_bridge")
    event = as_new_leg(event)
    facts = read_hangup(event)
    agent, trace = uuid.uuid4(), uuid.uuid4()
    ctx = CallContext(account_id=account_id, trace_id=trace, agent_id=agent, queue_id=uuid.uuid4())
    times = ctx.interaction
    times.queue_joined_at = facts.answered_at
    times.offered_at = facts.bridged_at - timedelta(milliseconds=30)
    times.connected_at = facts.bridged_at
    times.queue_left_at, times.queue_result = facts.bridged_at, "answered"
    if opened:
        times.segment_id = open_segment(account_id, trace, facts.call_id, agent, facts.bridged_at)
    return event, ctx, agent


def _rows(account_id, trace):
    with tenant_session(account_id) as db:
        summary = db.scalar(select(InteractionSummary).where(InteractionSummary.trace_id == trace))
        segments = db.scalars(select(InteractionSegment).where(InteractionSegment.trace_id == trace)).all()
        db.expunge_all()
    return summary, segments


def test_given_an_agent_call_then_the_record_closes_its_window_with_talk_and_connect_latency(make_account):
    account = make_account()
    event, ctx, agent = _agent_call(account.id)
    written = write_call_record(event, ctx)
    summary, (segment,) = _rows(account.id, ctx.trace_id)
    assert (summary.talk_ms, summary.connect_latency_ms, summary.queue_wait_ms, summary.abandoned) == \
        (TALK_MS, 30, 40, False)
    assert (segment.agent_id, segment.talk_ms, segment.handle_ms, segment.acw_ms) == (agent, TALK_MS, TALK_MS, 0)
    assert segment.id == ctx.interaction.segment_id and segment.ended_at == written.facts.ended_at


@pytest.mark.parametrize("wrap_up_ends_first", [False, True])
def test_given_wrap_up_ending_before_or_after_the_record_then_acw_and_aht_are_the_same(make_account, wrap_up_ends_first):
    account = make_account()
    event, ctx, agent = _agent_call(account.id)
    if wrap_up_ends_first:
        with tenant_session(account.id) as db:
            after_call_work_over(db, account.id, agent, 3000, read_hangup(event).ended_at)
    write_call_record(event, ctx)
    if not wrap_up_ends_first:
        with tenant_session(account.id) as db:
            after_call_work_over(db, account.id, agent, 3000, read_hangup(event).ended_at)
    summary, (segment,) = _rows(account.id, ctx.trace_id)
    assert (summary.acw_ms, summary.aht_ms) == (3000, TALK_MS + 3000)
    assert (segment.acw_ms, segment.handle_ms) == (3000, TALK_MS + 3000)


def test_given_a_disposition_set_while_the_call_is_live_then_the_record_keeps_it(make_account):
    account = make_account()
    event, ctx, agent = _agent_call(account.id)
    with tenant_session(account.id) as db:
        set_disposition(db, account.id, agent, "sale", call_id=uuid.UUID(event["Unique-ID"]))
    write_call_record(event, ctx)
    summary, _ = _rows(account.id, ctx.trace_id)
    assert (summary.disposition, summary.talk_ms) == ("sale", TALK_MS)


def test_given_the_window_could_not_be_opened_then_the_record_writes_it(make_account):
    account = make_account()
    event, ctx, agent = _agent_call(account.id, opened=False)
    write_call_record(event, ctx)
    _, (segment,) = _rows(account.id, ctx.trace_id)
    assert (segment.agent_id, segment.call_id, segment.talk_ms) == (agent, uuid.UUID(event["Unique-ID"]), TALK_MS)


def test_given_a_wrap_up_that_began_long_after_the_agents_last_window_then_no_after_call_work_is_put_on_it(make_account):
    """A wrap-up after a callback call (no window of its own) must not land on the previous call."""
    account = make_account()
    event, ctx, agent = _agent_call(account.id)
    write_call_record(event, ctx)
    with tenant_session(account.id) as db:
        after_call_work_over(db, account.id, agent, 3000, read_hangup(event).ended_at + timedelta(minutes=5))
    summary, (segment,) = _rows(account.id, ctx.trace_id)
    assert (summary.acw_ms, segment.acw_ms, segment.handle_ms) == (0, 0, TALK_MS)
    with tenant_session(account.id) as db:  # the one that follows it does; a second one does not add
        after_call_work_over(db, account.id, agent, 2000, read_hangup(event).ended_at)
        after_call_work_over(db, account.id, agent, 9000, read_hangup(event).ended_at)
    summary, (segment,) = _rows(account.id, ctx.trace_id)
    assert (summary.acw_ms, summary.aht_ms, segment.acw_ms) == (2000, TALK_MS + 2000, 2000)
