"""What the parties of a live call hear on the real switch as an agent (or the REST API) acts
on it (issue 24): an attended transfer to a listed ``sip:`` target, a three-way call ended for
all, and hold/unhold from ``POST /api/calls/:callId/actions``. The simulator proves the
commands; only the real switch says who is then sent whose audio.

What each party hears is what the switch sends it (``uuid_record`` of its write stream:
test_supervisor._sent), measured twice: its loudness (RMS of 16-bit samples: silence 0-2,
speech and music in the hundreds or more) and, where one party plays a known pure tone (the
``sip:`` target, an uploaded hold music), the share of the power at that tone
(hold_audio.tone_share: near 1 when that party alone is heard, near 0 for speech)."""
from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pytest

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import test_agent_channel_realswitch as channel_tests
from tests.realswitch.agent_call import caller_with_agent
from tests.realswitch.hold_audio import read_wav, tone_mp3, tone_share
from tests.realswitch.provision import poll
from tests.realswitch.rtp_capture import RtpCapture
from tests.realswitch.rtp_pcap import alaw_to_linear
from tests.realswitch.softphones import tone_wav
from tests.realswitch.test_agent_consult_realswitch import LOUD, QUIET, _consult, _consulted_leg, _details, _in_room
from tests.realswitch.test_api_transfer_realswitch import _channels
from tests.realswitch.test_supervisor import _loudness, _sent

channel_queue = channel_tests.channel_queue  # a queue with two SIP agents
_callstate = channel_tests._callstate

TARGET_HZ = 880.0  # the sip: target's tone: not the default music's chords, not the test tree's stepped tone
MUSIC_HZ = 660.0   # the uploaded hold music of the hold test's queue
ALONE = 0.8        # tone share: that party heard alone (measured 0.96-0.99)
MIXED = 0.2        # tone share: that party not heard (speech and music measured 0-0.06)
PCMA = 8  # RTP payload type: the talking phones answer PCMA
PHONE_SECONDS = 30  # the agents' phones stay registered this long (each test needs ~15 s)


def _hear(real_switch, parties: dict[str, str], label: str, hz: float) -> dict[str, tuple[int, float]]:
    """Per party: (RMS, share of ``hz``) of what the switch sends it over 1.5 s."""
    heard = {}
    for name, path in _sent(real_switch, parties, label).items():
        audio, rate = read_wav(path)
        heard[name] = (round(_loudness(path)), round(tone_share(audio, rate, hz), 3))
    return heard


def _on_the_wire(packets: list[tuple[float, bytes]], start: float, end: float) -> tuple[int, int]:
    """(packets, RMS) of the PCMA RTP a phone received between two epoch moments: no packets
    is silence too (a held phone's write stream has no frames: ``uuid_record`` writes no file)."""
    samples = np.array([alaw_to_linear(b) for at, payload in packets if start <= at <= end for b in payload],
                       dtype=float)
    count = sum(1 for at, _ in packets if start <= at <= end)
    return count, round(float(np.sqrt(np.mean(samples ** 2)))) if samples.size else 0


def _events(tenant, key: str, call_id: str) -> list[dict]:
    return [e["payload"] for e in tenant.events(key) if e["payload"]["callId"] == call_id]


def _hang_up(tenant, call_id: str) -> None:
    """The API hangs the call up (``test_done``); 404 once it has ended (a test that failed
    early leaves no caller talking for ever)."""
    tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup", "reason": "test_done"},
                      expect=(200, 404))


@contextmanager
def _hung_up(tenant, call) -> Iterator[None]:
    try:
        yield
    finally:
        _hang_up(tenant, call.call_id)


def test_given_an_agent_consulting_a_listed_sip_target_when_it_completes_then_the_caller_and_the_target_hear_each_other(
        product, tenant, channel_queue, sipp, real_switch, carriers, realswitch_workdir):
    """The caller talks (speech), the target (a sipp PBX on a listed host) plays an 880 Hz
    tone, the agent's phone is silent. Consulting, the agent hears the target; completed, the
    caller hears the target's tone alone (not the queue's music, not the agent) and the target
    hears the caller's speech."""
    if not any(t["host"] == "127.0.0.1" for t in tenant.admin.get("/api/sip-targets")):
        tenant.admin.post("/api/sip-targets", {"host": "127.0.0.1"})
    pbx = carriers.playing(tone_wav(realswitch_workdir / "tones", 30, hz=TARGET_HZ))
    target = {"type": "sip", "uri": f"sip:callee@127.0.0.1:{pbx.port}"}
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-until-bye.xml", phone_seconds=PHONE_SECONDS) as call, _hung_up(tenant, call):
        _consult(call, tenant, target)
        consulted = eventually(lambda: next((r["uuid"] for r in _channels(real_switch)
                                             if r["uuid"] not in (call.call_id, call.leg)), None),
                               timeout=10, what="the consulted leg")
        eventually(lambda: real_switch.api(f"uuid_getvar {consulted} sbc_consult_answered", check=False).strip()
                   == "true", timeout=15, what="the target answered")
        consulting = _hear(real_switch, {"caller": call.call_id, "agent": call.leg}, "sip-consulting", TARGET_HZ)

        assert call.client.command("completeTransfer")["ok"] is True
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the agent's leg gone")
        eventually(lambda: _in_room(real_switch, call.call_id, consulted), timeout=10,
                   what="the caller and the target in their room")
        moved = call.client.expect("call", lambda m: m["phase"] == "transferred", timeout=10)
        after = _hear(real_switch, {"caller": call.call_id, "target": consulted}, "sip-completed", TARGET_HZ)
        print("sip: target: (RMS, 880 Hz share) of what each party is sent:",
              {"consulting": consulting, "completed": after})
        _hang_up(tenant, call.call_id)
        result = call.caller.wait(30)

    assert result.ok, result.errors or result.stdout[-1500:]
    assert moved["to"] == target
    assert consulting["agent"][1] > ALONE, consulting                                  # the agent hears the target
    assert consulting["caller"][0] > LOUD and consulting["caller"][1] < MIXED, consulting  # the caller: music
    assert after["caller"][0] > LOUD and after["caller"][1] > ALONE, after    # the caller hears the target alone
    assert after["target"][0] > LOUD and after["target"][1] < MIXED, after   # the target hears the caller's speech
    record = tenant.wait_record(call.number)[0]
    assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == call.first.id
    assert record["hangup_reason"] == "test_done"
    [transferred] = _events(tenant, "call.transferred", call.call_id)
    assert (transferred["kind"], transferred["from"], transferred["to"]) == (
        "attended", {"agentId": call.first.id}, target)
    details = _details(tenant, record, 1)
    assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(call.first.id, True)]
    assert details["summary"]["transfer_count"] == 1


END_ALL_SECONDS = 2.0  # endAll → every leg gone from the switch (measured 0.1-0.3 s)


def test_given_a_three_way_call_when_the_agent_ends_all_then_every_leg_is_hung_up_at_once(
        product, tenant, channel_queue, sipp, real_switch):
    """The caller and the consulted agent's phone talk, the first agent's phone is silent. In
    the room each party hears the others; ``endAll`` hangs up the caller (its sipp gets the
    switch's BYE), the agent and the third party within END_ALL_SECONDS; the record says
    ``three_way_ended``."""
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-until-bye.xml", second_scenario="phone-answer-talk-ooc.xml",
                           phone_seconds=PHONE_SECONDS) as call, _hung_up(tenant, call):
        first, second = call.first, call.second
        _consult(call, tenant)
        target = _consulted_leg(tenant, real_switch, call)
        assert call.client.command("conference")["ok"] is True
        legs = {"caller": call.call_id, "agent": call.leg, "target": target}
        eventually(lambda: _in_room(real_switch, *legs.values()), timeout=10, what="the three legs in the room")
        three = {name: round(_loudness(path)) for name, path in _sent(real_switch, legs, "three-way-end").items()}

        asked = time.monotonic()
        ack = call.client.command("endAll")
        gone = {name: eventually(lambda leg=leg: _callstate(real_switch, leg) is None and time.monotonic() - asked,
                                 timeout=10, what=f"the {name}'s leg gone") for name, leg in legs.items()}
        result = call.caller.wait(15)
        print("end all: RMS of what each party was sent in the room:", three,
              "; seconds from endAll to each leg gone:", {k: round(v, 2) for k, v in gone.items()})

    assert ack["ok"] is True, ack
    assert three["caller"] > LOUD and three["agent"] > LOUD and three["target"] > LOUD, three
    assert max(gone.values()) <= END_ALL_SECONDS, gone
    assert result.ok, result.errors or result.stdout[-1500:]  # the caller got the switch's BYE
    record = tenant.wait_record(call.number)[0]
    assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == first.id
    assert record["hangup_reason"] == "three_way_ended" and record["status"] == "completed"
    assert [(c["agentId"], c["to"]) for c in _events(tenant, "call.conferenced", call.call_id)] == [
        (first.id, {"type": "agent", "agentId": second.id})]
    assert _events(tenant, "call.conference.left", call.call_id) == []  # nobody left: all were ended
    assert _events(tenant, "call.transferred", call.call_id) == []
    [ended] = poll(lambda: _events(tenant, "call.ended", call.call_id), 10)
    assert (ended["hangupReason"], ended["agentId"], ended["status"]) == ("three_way_ended", first.id, "completed")
    details = _details(tenant, record, 2)
    # the target was part of the call from its joining: its window closed with the room
    assert [(s["agent_id"], s["conferenced"]) for s in details["segments"]] == [(first.id, True), (second.id, True)]
    assert all(s["ended_at"] for s in details["segments"]), details["segments"]
    assert details["summary"]["transfer_count"] == 0
    # the target never had the caller alone: idle again, no wrap-up
    eventually(lambda: second.id in sip_agents.presence().idle_agents(str(tenant.account_id)), timeout=10,
               what="the third party idle again")


@pytest.fixture
def music_queue(tenant, real_switch):
    """A queue whose hold music is an uploaded MUSIC_HZ tone, with two SIP agents."""
    name = f"tone-{uuid.uuid4().hex[:6]}"
    tenant.admin.request("PUT", f"/api/moh/{name}", data=tone_mp3(MUSIC_HZ, 10.0),
                         headers={"Content-Type": "audio/mpeg"}, expect=201)
    queue = tenant.admin.post("/api/queues", {"name": f"hq-{uuid.uuid4().hex[:6]}", "moh": name,
                                              "offer_timeout_seconds": 15, "wrap_up_seconds": 1,
                                              "announce_position": False})
    agents = [sip_agents.new_agent(tenant, [queue["id"]], prefix="hq") for _ in range(2)]
    for agent in agents:
        assert poll(lambda a=agent: sip_agents.in_directory(real_switch, a), 15), "directory not applied"
    return queue, agents


HOLD_MS_SLACK = 1000  # heldMs runs from the agent leg's CHANNEL_HOLD to its CHANNEL_UNHOLD, not between the API's replies


def test_given_a_caller_talking_to_an_agent_when_the_api_holds_then_unholds_then_the_caller_hears_music_then_the_agent_again(
        product, tenant, music_queue, sipp, real_switch, realswitch_workdir):
    """The caller and the agent's phone both talk (speech). Before the hold each hears the
    other; held (``uuid_hold`` of the agent's leg), the caller hears the queue's music (the
    660 Hz tone alone: not the agent) and the agent hears nothing (no RTP reaches its phone:
    tshark on the switch's RTP ports); unheld, both hear each other again. The hold's length is
    in ``call.resumed``, ``call.ended`` and the summary."""
    capture = RtpCapture(realswitch_workdir / f"api-hold-{uuid.uuid4().hex[:6]}.pcap", real_switch.ports.rtp_start,
                         real_switch.ports.rtp_end)
    heard, windows = {}, {}
    try:
        with caller_with_agent(product, tenant, music_queue, sipp, real_switch, codec="PCMA",
                               caller_scenario="uac-talk-until-bye.xml",
                               first_scenario="phone-answer-talk-hold-ooc.xml",
                               phone_seconds=PHONE_SECONDS) as call, _hung_up(tenant, call):
            path = f"/api/calls/{call.call_id}/actions"
            agent_port = int(real_switch.api(f"uuid_getvar {call.leg} local_media_port").strip())
            parties = {"caller": call.call_id, "agent": call.leg}

            def listen(state: str, who: dict[str, str]) -> None:
                begun = time.time()
                heard[state] = _hear(real_switch, who, f"api-{state}", MUSIC_HZ)
                windows[state] = (begun, time.time())

            listen("talking", parties)
            held = tenant.admin.post(path, {"action": "hold"}, expect=200)
            held_at = time.monotonic()
            eventually(lambda: _events(tenant, "call.hold", call.call_id), timeout=10, what="call.hold")
            # the held agent's write stream has no frames (uuid_record writes no file): the wire says
            listen("held", {"caller": call.call_id})
            unheld = tenant.admin.post(path, {"action": "unhold"}, expect=200)
            held_for_ms = (time.monotonic() - held_at) * 1000
            [resumed] = eventually(lambda: _events(tenant, "call.resumed", call.call_id), timeout=10,
                                   what="call.resumed")
            listen("unheld", parties)
            _hang_up(tenant, call.call_id)
            result = call.caller.wait(30)
    finally:
        capture.stop()
    to_agent = capture.audio_from(agent_port, payload_type=PCMA)
    wire = {state: _on_the_wire(to_agent, *window) for state, window in windows.items()}
    print("API hold: (RMS, 660 Hz share) of what each party is sent:", heard,
          "; (RTP packets, RMS) the agent's phone received:", wire,
          f"; held {held_for_ms:.0f} ms between the API's replies, call.resumed heldMs {resumed['heldMs']}")

    assert (held["state"]["held"], unheld["state"]["held"]) == (True, False)
    assert heard["talking"]["caller"][0] > LOUD and heard["talking"]["agent"][0] > LOUD, heard
    assert heard["talking"]["caller"][1] < MIXED, heard                          # the agent's speech, no music
    assert heard["held"]["caller"][0] > LOUD and heard["held"]["caller"][1] > ALONE, heard  # the music alone
    assert heard["unheld"]["caller"][0] > LOUD and heard["unheld"]["caller"][1] < MIXED, heard
    assert heard["unheld"]["agent"][0] > LOUD, heard
    assert wire["talking"][1] > LOUD and wire["unheld"][1] > LOUD, wire          # the phone got the caller's speech
    assert wire["held"][1] < QUIET, wire                                         # held: nothing of the caller
    assert result.ok, result.errors or result.stdout[-1500:]
    assert len(_events(tenant, "call.hold", call.call_id)) == 1
    assert abs(resumed["heldMs"] - held_for_ms) <= HOLD_MS_SLACK, (resumed, held_for_ms)
    applied = [(e["action"], e["details"]) for e in _events(tenant, "call.control.applied", call.call_id)]
    assert applied[:2] == [("hold", {"leg": call.leg}), ("unhold", {"leg": call.leg})], applied
    record = tenant.wait_record(call.number)[0]
    [ended] = poll(lambda: _events(tenant, "call.ended", call.call_id), 10)
    summary = _details(tenant, record, 1)["summary"]
    print(f"call.ended holdCount {ended['holdCount']} holdMs {ended['holdMs']}; "
          f"summary hold_count {summary['hold_count']} hold_ms {summary['hold_ms']}")
    assert (ended["holdCount"], summary["hold_count"]) == (1, 1), (ended, summary)
    assert ended["holdMs"] == summary["hold_ms"] == resumed["heldMs"], (ended, summary, resumed)
