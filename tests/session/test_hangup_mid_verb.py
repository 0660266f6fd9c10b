"""A caller who hangs up in the middle of any verb ends the call at once: nothing waits for
the verb to finish, the record is written and the limiter slot is free."""
from __future__ import annotations

import pytest

from tests.session.conftest import call_record
from tests.simulator import Call
from tests.simulator.scenario import Timing

LONG = "https://media.example.com/long.wav"

VERBS_IN_PROGRESS = {
    "say": {"verb": "say", "text": "A long announcement", "loop": 50},
    "play": {"verb": "play", "url": LONG},
    "gather": {"verb": "gather", "input": ["dtmf"], "timeout": 60, "numDigits": 4,
               "actionHook": "http://127.0.0.1:9/never"},
    "dial": {"verb": "dial", "target": [{"type": "sip", "name": "sip:alice@example.com"}]},
    "queue": {"verb": "queue", "name": "support"},
    "conference": {"verb": "conference", "name": "room1"},
    "record": {"verb": "record"},
    "listen": {"verb": "listen", "url": "wss://listen.example.com/audio"},
    "pause": {"verb": "pause", "length": 60},
}


@pytest.mark.parametrize("name", sorted(VERBS_IN_PROGRESS))
def test_given_verb_running_when_caller_hangs_up_then_call_ends_at_once_and_is_recorded(
        name, controller, simulate_call, number_with_app, owner_conn, services):
    account, number, _ = number_with_app(app_json=[VERBS_IN_PROGRESS[name]], sip_hosts=("example.com",))
    # no prompt lasts less than the minute either (gather waits out its prompt and timeout)
    scenario = (Call(callee=number, timing=Timing(playback=60.0)).media(f"http_cache://{LONG}", 60.0)
                .bridge_answers(talk=60.0).hangup_after(0.5))
    call = simulate_call(scenario, controller)
    # every verb above would run for a minute: finishing within the wait proves the interrupt
    assert call.wait(10), "the session did not let go of the call"
    record = call_record(owner_conn, call.uuid)
    assert record is not None and record["hangup_cause"] == "NORMAL_CLEARING"
    assert name in (record["journey"] or "")
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}
