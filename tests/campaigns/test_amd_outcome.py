"""What the answering-machine detection's report on ``call.ended`` makes of a campaign attempt
(app/campaigns/amd.py, app/campaigns/dialer.outcome_of), and the settings the call runs."""
from __future__ import annotations

import pytest

from app.campaigns.amd import AmdSettings, machine_not_connected, result_of
from app.campaigns.dialer import outcome_of

ANSWERED = {"answeredAt": "2026-11-26T14:49:27.083Z", "talkMs": 1800}


@pytest.mark.parametrize("report, outcome", [
    ({"result": "machine", "action": "hangup"}, "machine"),
    ({"result": "machine", "action": "message", "messageLeft": True}, "machine"),
    ({"result": "machine", "action": "connected"}, "human"),   # connect mode: the agent talked to it
    ({"result": "human", "action": "connected"}, "human"),
    ({"result": "notsure", "action": "connected"}, "human"),
    (None, "human"),                                            # no detection ran
])
def test_given_a_detection_report_then_the_attempt_outcome_follows_what_the_call_did(report, outcome):
    assert outcome_of({**ANSWERED, "amd": report}) == outcome


def test_given_an_outcome_recovered_from_the_call_record_then_the_machine_hang_up_reason_says_machine():
    # recover_lost builds the payload from the record's columns only: no ``amd`` report
    assert outcome_of({**ANSWERED, "hangupReason": "answering_machine"}) == "machine"
    assert machine_not_connected({**ANSWERED, "hangupReason": "normal"}) is False


@pytest.mark.parametrize("mode, message, expected", [
    ("off", None, None), (None, None, None),
    ("hangup", {"verb": "say", "text": "kept for later"}, AmdSettings("hangup", None)),
    ("message", {"verb": "say", "text": "hi"}, AmdSettings("message", {"verb": "say", "text": "hi"})),
])
def test_given_a_campaign_setting_then_the_call_runs_detection_only_when_it_is_on(mode, message, expected):
    assert AmdSettings.of(mode, message) == expected


@pytest.mark.parametrize("report, shown", [
    ({"result": "human", "action": "connected"}, "human"),
    ({"result": "machine", "action": "hangup"}, "machine"),
    ({"result": "notsure", "action": "connected"}, "notsure"),
    ({"result": None, "action": None}, "none"),  # ran; the customer hung up before the verdict
    (None, None),                                # no detection ran: no verdict to report
])
def test_given_a_detection_report_then_reports_show_its_verdict_or_none(report, shown):
    assert result_of(report) == shown
