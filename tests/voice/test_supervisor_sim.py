"""The controller's ``call.supervise`` handler (app/voice/supervisor.py) against the ESL simulator,
which eavesdrops the way FreeSWITCH 1.10.12 does (tests/fixtures/esl_captures/
realswitch_eavesdrop/notes.md): start rings the supervisor into ``eavesdrop(<callId>)`` on the
switch that holds the call, a mode change is an ``eavesdrop-command`` queued on the
supervisor's session, stop is ``uuid_kill``, and the call ending ends the supervisor's leg.
Every step is an event: call.control.start / call.control.stop per mode segment and
agent.supervisor.coaching around whispering."""
from __future__ import annotations

import time
import uuid

import gevent
import pytest

from app.calls import supervision as sv
from app.events.envelope import Envelope
from app.voice.supervisor import Supervisor
from esl.inbound import InboundConnection
from tests.plugins.eventually import eventually

ACCOUNT = str(uuid.uuid4())


@pytest.fixture
def node(inbound_sim):
    conn = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    conn.connect()
    yield conn
    conn.close()


class Harness:
    def __init__(self, sim, node, redis_client, prefix) -> None:
        self.sim, self.redis, self.prefix = sim, redis_client, prefix
        self.events: list[tuple[str, dict]] = []
        self.supervisor = Supervisor(redis_client, prefix, lambda: [node],
                                     emit=lambda key, payload, **kw: self.events.append((key, payload)),
                                     poll_seconds=0.02)
        self.call = sim.add_channel()  # the caller's leg, bridged to the agent
        self.user = str(uuid.uuid4())
        self.record = sv.Supervision(id=str(uuid.uuid4()), call_id=self.call.uuid, account_id=ACCOUNT,
                                     supervisor_id=self.user, agent_id=str(uuid.uuid4()), mode="listen",
                                     state=sv.DIALING, endpoint="user/ag0123456789ab@acme", started=time.time())
        sv.claim_supervision(redis_client, prefix, self.record)

    def command(self, action: str, mode: str = "listen") -> gevent.Greenlet:
        payload = {"action": action, "supervisionId": self.record.id, "callId": self.call.uuid,
                   "supervisorId": self.user, "agentId": self.record.agent_id, "mode": mode,
                   "endpoint": self.record.endpoint, "timeoutSeconds": 5}
        return gevent.spawn(self.supervisor.handle, Envelope("call.supervise", payload, account=ACCOUNT))

    def keys(self) -> list[tuple[str, str, object]]:
        return [(k, p.get("mode", ""), p.get("reason", p.get("coaching"))) for k, p in self.events]

    def wait_for(self, count: int) -> None:
        eventually(lambda: len(self.events) >= count, timeout=5, what=f"{count} supervision event(s)")


@pytest.fixture
def floor(inbound_sim, node, redis_client, redis_prefix) -> Harness:
    return Harness(inbound_sim, node, redis_client, redis_prefix)


def test_given_a_start_when_the_supervisor_answers_then_eavesdrop_on_the_call_and_call_control_start(floor):
    watcher = floor.command("start", "whisper")
    floor.wait_for(2)

    [originate] = floor.sim.originates
    assert originate.endswith(f"&eavesdrop({floor.call.uuid})")
    assert f"origination_uuid={floor.record.id}" in originate and "eavesdrop_enable_dtmf=false" in originate
    assert floor.sim.eavesdrop_mode(floor.record.id) == "whisper"
    assert floor.keys() == [("call.control.start", "whisper", None), ("agent.supervisor.coaching", "whisper", True)]
    record = sv.read_supervision(floor.redis, floor.prefix, floor.call.uuid, floor.user)
    assert (record.state, record.mode) == (sv.ACTIVE, "whisper")
    watcher.kill()


def test_given_an_active_supervision_when_the_mode_changes_then_the_running_eavesdrop_switches(floor):
    watcher = floor.command("start", "listen")
    floor.wait_for(1)

    floor.command("mode", "barge").join(timeout=5)
    floor.command("mode", "whisper").join(timeout=5)

    assert floor.sim.eavesdrop_mode(floor.record.id) == "whisper"
    assert floor.keys() == [
        ("call.control.start", "listen", None),
        ("call.control.stop", "listen", "mode_changed"), ("call.control.start", "barge", None),
        ("call.control.stop", "barge", "mode_changed"), ("call.control.start", "whisper", None),
        ("agent.supervisor.coaching", "whisper", True)]
    watcher.kill()


def test_given_an_active_supervision_when_stopped_then_the_leg_is_hung_up_and_call_control_stop_stopped(floor):
    watcher = floor.command("start", "whisper")
    floor.wait_for(2)

    floor.command("stop").join(timeout=5)
    watcher.join(timeout=5)

    assert floor.record.id not in floor.sim.channels and floor.call.uuid in floor.sim.channels
    assert floor.keys()[-2:] == [("agent.supervisor.coaching", "whisper", False),
                                 ("call.control.stop", "whisper", "stopped")]
    assert sv.read_supervision(floor.redis, floor.prefix, floor.call.uuid, floor.user) is None


def test_given_a_listening_supervisor_when_the_call_ends_then_its_leg_ends_with_call_ended(floor):
    watcher = floor.command("start", "listen")
    floor.wait_for(1)

    floor.sim.hangup_channel(floor.call.uuid)
    watcher.join(timeout=5)

    assert floor.record.id not in floor.sim.channels
    assert floor.keys()[-1] == ("call.control.stop", "listen", "call_ended")


def test_given_a_call_no_switch_holds_when_starting_then_no_originate_and_stop_call_ended(floor):
    floor.sim.hangup_channel(floor.call.uuid)

    floor.command("start", "listen").join(timeout=5)

    assert floor.sim.originates == []
    assert floor.keys() == [("call.control.stop", "listen", "call_ended")]
    assert sv.read_supervision(floor.redis, floor.prefix, floor.call.uuid, floor.user) is None


def test_given_a_supervisor_phone_that_does_not_answer_when_starting_then_stop_not_answered(floor):
    floor.sim.originate_fails = "NO_ANSWER"

    floor.command("start", "listen").join(timeout=5)

    assert floor.keys() == [("call.control.stop", "listen", "supervisor_not_answered:NO_ANSWER")]


def test_given_eavesdrop_on_a_uuid_that_does_not_exist_when_originated_then_the_leg_hangs_up_at_once(inbound_sim, node):
    reply = node.api(f"originate {{origination_uuid={uuid.uuid4()}}}user/x@acme &eavesdrop({uuid.uuid4()})")
    leg = reply.split()[1]

    assert reply.startswith("+OK")
    eventually(lambda: leg not in inbound_sim.channels, timeout=5, what="the eavesdrop leg hung up")
