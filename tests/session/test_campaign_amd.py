"""A campaign call's answering-machine detection (app/voice/amd.py) against the simulator: the
controller dials the contact (``call.originate`` with ``campaignId``), the answered leg runs
``amd`` (and ``avmd_start`` in message mode) before its reserved agent is dialled, and acts on
the verdict per the campaign's ``amd`` setting; ``call.ended`` carries the report the dialer
turns into the attempt's outcome (``machine``). The simulator's mod_amd / mod_avmd behave as
the real switch was measured to (tests/realswitch/test_campaign_amd.py)."""
from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest
import soundfile as sf
from sqlalchemy import text

from app import limits
from app.campaigns.dialer import outcome_of
from app.db.engine import tenant_session
from app.media.moh import MusicLibrary
from app.models import Agent, Campaign, Queue, SipTargetHost, User
from tests.session.conftest import call_record, executed
from tests.session.test_originate import _request, _route

SAY_MESSAGE = {"verb": "say", "text": "This is Acme calling about your order. Please call us back."}


def _campaign(account_id: uuid.UUID, amd: str, message: Optional[dict] = None) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    """(campaign id, agent id, agent group id): an agent reached at a sip: URI of a listed host."""
    with tenant_session(account_id) as session:
        session.add(SipTargetHost(account_id=account_id, host="pbx.example.com"))
        user = User(account_id=account_id, username=f"agent{uuid.uuid4().hex[:6]}", password_hash="x", role="agent")
        queue = Queue(account_id=account_id, name=f"q{uuid.uuid4().hex[:6]}")
        session.add_all([user, queue])
        session.flush()
        agent = Agent(account_id=account_id, user_id=user.id, contact="sip:agent7@pbx.example.com",
                      state="available")
        campaign = Campaign(account_id=account_id, name=f"c{uuid.uuid4().hex[:6]}", dialer_mode="progressive",
                            agent_group_ids=[queue.id], amd=amd, amd_message=message)
        session.add_all([agent, campaign])
        session.flush()
        return campaign.id, agent.id, queue.id


def _dial(dialling, inbound_sim, make_account, amd: str, message: Optional[dict] = None, **answered_by: Any):
    """Dial one campaign contact whose phone answers as ``answered_by`` says; (leg, request)."""
    originator, _ = dialling
    account = make_account()
    _route(originator, account.id)
    campaign_id, agent_id, queue_id = _campaign(account.id, amd, message)
    result, cause = answered_by.pop("verdict")
    inbound_sim.on_originate = lambda scenario: scenario.answered_by(result, cause, **answered_by).bridge_answers(
        talk=0.05)
    request = _request(account, agent_id=agent_id, queue_id=queue_id, campaign_id=campaign_id)
    assert originator.originate(request) is True
    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    return leg, request


def _ended(owner_conn, call_id: uuid.UUID) -> dict:
    return owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = 'call.ended' "
        "AND body->'payload'->>'callId' = :c"), {"c": str(call_id)}).scalar_one()


def _apps(leg) -> list[str]:
    return [app for app, _ in executed(leg) if app != "uuid_answer"]


def test_given_hangup_mode_when_a_person_answers_then_the_agent_is_dialled_after_the_verdict(
        dialling, inbound_sim, make_account, owner_conn, media_dns):
    leg, request = _dial(dialling, inbound_sim, make_account, "hangup", verdict=("HUMAN", "HUMAN"))

    apps = _apps(leg)
    assert "avmd_start" not in apps  # the beep only matters when a message is left
    assert apps.index("amd") < apps.index("bridge")
    ended = _ended(owner_conn, request.call_id)
    assert ended["amd"] == {"mode": "hangup", "result": "human", "cause": "HUMAN", "detectionMs": ended["amd"]["detectionMs"],
                            "beepMs": None, "beepHz": None, "action": "connected", "messageLeft": False,
                            "messageMs": None, "messageError": None}
    assert outcome_of(ended) == "human"
    assert "amd:human" in call_record(owner_conn, str(request.call_id))["journey"]


def test_given_hangup_mode_when_a_machine_answers_then_it_is_hung_up_without_dialling_the_agent(
        dialling, inbound_sim, make_account, owner_conn):
    leg, request = _dial(dialling, inbound_sim, make_account, "hangup", verdict=("MACHINE", "MAXWORDS"))

    assert "bridge" not in _apps(leg)
    ended = _ended(owner_conn, request.call_id)
    assert (ended["amd"]["result"], ended["amd"]["cause"], ended["amd"]["action"]) == ("machine", "MAXWORDS", "hangup")
    assert ended["hangupReason"] == "answering_machine"
    assert outcome_of(ended) == "machine"


@pytest.mark.parametrize("mode, verdict", [("connect", ("MACHINE", "LONGGREETING")), ("hangup", ("NOTSURE", "TOOLONG")),
                                           ("message", ("HUMAN", "HUMAN"))])
def test_given_a_verdict_that_does_not_end_the_call_then_the_agent_is_dialled(
        dialling, inbound_sim, make_account, owner_conn, media_dns, mode, verdict):
    leg, request = _dial(dialling, inbound_sim, make_account, mode, SAY_MESSAGE if mode == "message" else None,
                         verdict=verdict, beep_after=0.5)

    apps = _apps(leg)
    assert "bridge" in apps and "speak" not in apps
    if mode == "message":  # the beep detector stops with the verdict, before the agent rings
        assert apps.index("avmd_start") < apps.index("amd") < apps.index("avmd_stop") < apps.index("bridge")
    assert _ended(owner_conn, request.call_id)["amd"]["action"] == "connected"


def test_given_message_mode_when_a_machine_answers_then_the_message_plays_after_the_beeps_end_and_the_call_ends(
        dialling, inbound_sim, make_account, owner_conn):
    leg, request = _dial(dialling, inbound_sim, make_account, "message", SAY_MESSAGE,
                         verdict=("MACHINE", "MAXWORDS"), after=0.1, beep_after=0.6, beep_rest=0.4)

    apps = _apps(leg)
    assert "bridge" not in apps
    assert apps[apps.index("amd"):] == ["amd", "avmd_stop", "detect_silence", "speak"]
    spoken = [arg for app, arg in executed(leg) if app == "speak"]
    assert spoken and spoken[0].endswith(SAY_MESSAGE["text"])
    (quiet,) = [arg for app, arg in executed(leg) if app == "detect_silence"]
    assert quiet.split() == [str(limits.CAMPAIGN_AMD_BEEP_END_THRESHOLD), str(limits.CAMPAIGN_AMD_BEEP_END_SILENT_FRAMES),
                             str(round(limits.CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS * 1000))]
    speak_at = next(c.at for c in leg.commands if c.app == "speak")
    avmd_at = next(c.at for c in leg.commands if c.app == "avmd_start")
    assert speak_at - avmd_at >= 0.6 + 0.4  # not before the beep's end (avmd reports it as it starts)
    report = _ended(owner_conn, request.call_id)["amd"]
    assert (report["result"], report["action"], report["messageLeft"], report["beepHz"]) == (
        "machine", "message", True, 1053.2)
    assert report["beepMs"] >= 600 and report["messageMs"] is not None
    assert outcome_of(_ended(owner_conn, request.call_id)) == "machine"


def _payload(owner_conn, key: str, call_id: uuid.UUID) -> dict:
    return owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = :k "
        "AND body->'payload'->>'callId' = :c"), {"k": key, "c": str(call_id)}).scalar_one()


@pytest.mark.parametrize("verdict, action", [(("HUMAN", "HUMAN"), "connected"), (("MACHINE", "MAXWORDS"), "message")])
def test_given_a_screened_answer_then_call_amd_tells_the_verdict_and_its_action_before_the_beep_is_awaited(
        dialling, inbound_sim, make_account, owner_conn, media_dns, verdict, action):
    """The dialer learns at the verdict whether the answer will want an agent, not when the
    call ends: the machine's call.amd is published before the 0.6 s beep, the message after."""
    _, request = _dial(dialling, inbound_sim, make_account, "message", SAY_MESSAGE, verdict=verdict, after=0.1,
                       beep_after=0.6)

    told = _payload(owner_conn, "call.amd", request.call_id)
    ended = _ended(owner_conn, request.call_id)
    assert {k: told[k] for k in ("mode", "result", "cause", "action", "detectionMs")} == {
        "mode": "message", "result": verdict[0].lower(), "cause": verdict[1], "action": action,
        "detectionMs": ended["amd"]["detectionMs"]}
    if action == "message":
        gap = datetime.fromisoformat(ended["endedAt"]) - datetime.fromisoformat(told["at"])
        assert gap.total_seconds() >= 0.5  # told at ~0.1 s; the beep at 0.6 s, then the message


def test_given_message_mode_when_the_line_stays_loud_after_the_beep_then_the_message_plays_once_that_wait_is_over(
        dialling, inbound_sim, make_account, owner_conn, monkeypatch):
    monkeypatch.setattr(limits, "CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS", 0.3)
    leg, request = _dial(dialling, inbound_sim, make_account, "message", SAY_MESSAGE,
                         verdict=("MACHINE", "MAXWORDS"), after=0.1, beep_after=0.6, beep_rest=30.0)

    speak_at = next(c.at for c in leg.commands if c.app == "speak")
    avmd_at = next(c.at for c in leg.commands if c.app == "avmd_start")
    assert 0.6 + 0.3 <= speak_at - avmd_at < 0.6 + 2.0  # the bounded wait, not the 30 s tone
    report = _ended(owner_conn, request.call_id)["amd"]
    assert (report["action"], report["messageLeft"]) == ("message", True)


def test_given_message_mode_when_no_beep_comes_then_the_message_is_left_once_the_wait_is_over(
        dialling, inbound_sim, make_account, owner_conn, monkeypatch):
    monkeypatch.setattr(limits, "CAMPAIGN_AMD_BEEP_WAIT_SECONDS", 0.5)
    leg, request = _dial(dialling, inbound_sim, make_account, "message", SAY_MESSAGE,
                         verdict=("MACHINE", "LONGGREETING"), beep_after=None)

    assert "speak" in _apps(leg) and "detect_silence" not in _apps(leg)  # no beep: no beep's end to wait for
    report = _ended(owner_conn, request.call_id)["amd"]
    assert (report["beepMs"], report["messageLeft"]) == (None, True)


def test_given_message_mode_when_the_machine_hangs_up_before_its_beep_then_no_message_is_left(
        dialling, inbound_sim, make_account, owner_conn):
    originator, _ = dialling
    account = make_account()
    _route(originator, account.id)
    campaign_id, agent_id, queue_id = _campaign(account.id, "message", SAY_MESSAGE)
    inbound_sim.on_originate = lambda scenario: scenario.answered_by("MACHINE", "MAXWORDS", beep_after=5.0) \
        .hangup_after(0.4)
    request = _request(account, agent_id=agent_id, queue_id=queue_id, campaign_id=campaign_id)
    assert originator.originate(request) is True
    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)

    assert "speak" not in _apps(leg) and "bridge" not in _apps(leg)
    ended = _ended(owner_conn, request.call_id)
    assert (ended["amd"]["result"], ended["amd"]["messageLeft"]) == ("machine", False)
    assert outcome_of(ended) == "machine"


def test_given_a_campaign_with_amd_off_then_the_answered_leg_dials_its_agent_without_detection(
        dialling, inbound_sim, make_account, owner_conn, media_dns):
    leg, request = _dial(dialling, inbound_sim, make_account, "off", verdict=("MACHINE", "MAXWORDS"))

    assert "amd" not in _apps(leg) and "bridge" in _apps(leg)
    assert _ended(owner_conn, request.call_id)["amd"] is None


def _uploads(services, tmp_path, account_id: uuid.UUID, name: str) -> Path:
    """The account's uploaded file ``name`` in a fresh moh.dir the session looks in."""
    services.music = MusicLibrary(str(tmp_path / "moh"))
    folder = tmp_path / "moh" / str(account_id)
    folder.mkdir(parents=True)
    sf.write(str(folder / f"{name}.wav"), np.zeros(8000, dtype=np.int16), 8000, subtype="PCM_16")
    return folder / f"{name}.wav"


def _dial_account(dialling, inbound_sim, account, message: dict, **answered_by: Any):
    originator, _ = dialling
    _route(originator, account.id)
    campaign_id, agent_id, queue_id = _campaign(account.id, "message", message)
    result, cause = answered_by.pop("verdict")
    inbound_sim.on_originate = lambda scenario: scenario.answered_by(result, cause, **answered_by)
    request = _request(account, agent_id=agent_id, queue_id=queue_id, campaign_id=campaign_id)
    assert originator.originate(request) is True
    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    return leg, request


def test_given_an_uploaded_message_when_a_machine_answers_then_the_accounts_own_file_plays_after_the_beep(
        dialling, inbound_sim, make_account, owner_conn, services, tmp_path):
    account = make_account()
    recording = _uploads(services, tmp_path, account.id, "renewal-drop")
    leg, request = _dial_account(dialling, inbound_sim, account, {"audio": "renewal-drop"},
                                 verdict=("MACHINE", "MAXWORDS"), after=0.1, beep_after=0.6)

    apps = _apps(leg)
    assert apps[apps.index("amd"):] == ["amd", "avmd_stop", "detect_silence", "playback"] and "bridge" not in apps
    assert [arg for app, arg in executed(leg) if app == "playback"] == [str(recording)]
    playback_at = next(c.at for c in leg.commands if c.app == "playback")
    avmd_at = next(c.at for c in leg.commands if c.app == "avmd_start")
    assert playback_at - avmd_at >= 0.6  # not before the beep
    report = _ended(owner_conn, request.call_id)["amd"]
    assert (report["action"], report["messageLeft"], report["messageError"]) == ("message", True, None)


def test_given_an_uploaded_message_gone_or_another_accounts_when_a_machine_answers_then_hung_up_without_a_message(
        dialling, inbound_sim, make_account, owner_conn, services, tmp_path):
    account, other = make_account(), make_account()
    _uploads(services, tmp_path, other.id, "renewal-drop")  # the name exists, in another account only
    leg, request = _dial_account(dialling, inbound_sim, account, {"audio": "renewal-drop"},
                                 verdict=("MACHINE", "MAXWORDS"), after=0.1, beep_after=0.6)

    apps = _apps(leg)
    assert "playback" not in apps and "bridge" not in apps and apps[-2:] == ["amd", "avmd_stop"]
    ended = _ended(owner_conn, request.call_id)
    assert (ended["amd"]["action"], ended["amd"]["messageLeft"], ended["amd"]["messageError"]) == (
        "hangup", False, "audio_not_found")
    assert ended["hangupReason"] == "answering_machine" and outcome_of(ended) == "machine"
