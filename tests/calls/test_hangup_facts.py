"""Facts and status read from real CHANNEL_HANGUP_COMPLETE events (FreeSWITCH 1.10.12 captures)."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from app.calls.hangup import call_status, read_hangup
from tests.calls.captures import hangup_events


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def test_given_answered_playback_call_then_times_and_durations_come_from_uepoch_and_msec():
    (event,) = hangup_events("outbound_answer_playback_hangup")
    facts = read_hangup(event)
    assert facts.call_id == "8f763837-3002-4d1c-b9d2-4967b1a114dc"
    assert facts.started_at == utc(2026, 11, 21, 7, 36, 3, 758288)
    assert facts.answered_at == utc(2026, 11, 21, 7, 36, 4, 278298)
    assert facts.ended_at == utc(2026, 11, 21, 7, 36, 5, 338291)
    assert (facts.ring_ms, facts.talk_ms, facts.duration_ms) == (520, 1060, 1580)
    assert facts.hangup_cause == "NORMAL_CLEARING" and facts.hangup_cause_q850 == 16
    assert facts.hangup_disposition == "send_bye"
    assert facts.sip_call_id == "1-10887@127.0.0.1"
    assert (facts.caller, facts.callee, facts.source_ip) == ("sipp", "9001", "127.0.0.1")
    assert (facts.hold_count, facts.hold_ms) == (0, 0)
    assert facts.bridged_at is None
    assert call_status(facts) == "completed"


def test_given_call_put_on_hold_once_then_hold_count_1_and_hold_ms_from_accum():
    (event,) = hangup_events("inbound_hold_unhold")
    facts = read_hangup(event)
    assert facts.hold_count == 1
    assert facts.hold_ms == 3004
    assert facts.hangup_disposition == "recv_bye" and facts.sip_status == 200


def test_given_refused_originate_leg_then_failed_with_sip_503_and_no_talk():
    events = hangup_events("inbound_originate_bgapi")
    refused = next(e for e in events if e.variable("answer_uepoch") == "0")
    facts = read_hangup(refused)
    assert not facts.answered
    assert facts.talk_ms == 0 and facts.ring_ms == 0
    assert facts.hangup_cause == "NORMAL_TEMPORARY_FAILURE" and facts.hangup_cause_q850 == 41
    assert facts.sip_status == 503
    assert facts.direction == "outbound"
    assert call_status(facts) == "failed"


def test_given_bridged_call_then_bridge_time_is_read():
    (event,) = hangup_events("outbound_bridge")
    facts = read_hangup(event)
    assert facts.bridged_at == utc(2026, 11, 21, 7, 36, 56, 858287)
    assert call_status(facts) == "completed"  # answered: a failed bridge later is not a failed call


@pytest.mark.parametrize("cause,direction,expected", [
    ("USER_BUSY", "outbound", "busy"),
    ("NO_ANSWER", "outbound", "no-answer"),
    ("NO_USER_RESPONSE", "outbound", "no-answer"),
    ("ORIGINATOR_CANCEL", "inbound", "canceled"),
    ("NORMAL_CLEARING", "inbound", "canceled"),
    ("NORMAL_CLEARING", "outbound", "no-answer"),
    ("UNALLOCATED_NUMBER", "outbound", "failed"),
    ("CALL_REJECTED", "outbound", "failed"),
])
def test_given_unanswered_leg_when_cause_is_x_then_status_is_y(cause, direction, expected):
    events = hangup_events("inbound_originate_bgapi")
    base = read_hangup(next(e for e in events if e.variable("answer_uepoch") == "0"))
    assert call_status(replace(base, hangup_cause=cause, direction=direction)) == expected


def test_given_limiter_refusal_then_status_refused_whatever_the_cause():
    (event,) = hangup_events("outbound_answer_playback_hangup")
    assert call_status(read_hangup(event), refused=True) == "refused"
