"""FlowRunner on a simulated call: gather routes by digits, default on no input, step limit."""
from __future__ import annotations

import json
from pathlib import Path

from app.flows import FlowRunner, validate_flow
from tests.plugins.webhook_server import Reply
from tests.simulator import Call

FLOWS = Path(__file__).resolve().parent.parent / "fixtures" / "verbs" / "flows"
MENU = "'say:Press 1 for sales, 2 for support' silence_stream://250 sbc_gather_digits [0-9*#]+"


def _menu_flow():
    return validate_flow(json.loads((FLOWS / "good" / "ivr_menu_loop_through_gather.json").read_text()))


def test_given_ivr_flow_when_caller_presses_2_then_support_queue_runs(run_on_call):
    runner = FlowRunner(_menu_flow())
    run = run_on_call(Call().press("2").media("local_stream://default", 5.0).hangup_after(0.5), runner.run)
    apps = run.apps()[1:]
    assert apps[:3] == [("speak", "flite|kal|Welcome to Acme"),
                        ("play_and_get_digits", f"1 1 1 5000 # {MENU}"),
                        ("speak", "flite|kal|You are caller number 1")]
    assert runner.path == ["welcome", "menu", "support"]


def test_given_ivr_flow_when_caller_gives_no_input_then_default_loops_back_to_the_menu(run_on_call):
    runner = FlowRunner(_menu_flow(), max_steps=5)
    run = run_on_call(Call(), runner.run)
    assert runner.path == ["welcome", "menu", "sorry", "menu", "sorry"]
    assert run.outcome.reason == "flow_step_limit"
    assert [a for a, _ in run.apps()[1:]] == ["speak", "play_and_get_digits", "speak", "play_and_get_digits", "speak"]


def test_given_flow_ending_in_redirect_when_run_then_hook_reply_takes_over(run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "say", "text": "from the hook"}]))
    flow = validate_flow({"start": "t", "nodes": {
        "t": {"verb": {"verb": "tag", "data": {"flow": "v2"}}, "next": "r"},
        "r": {"verb": {"verb": "redirect", "url": hook_server.url("/after")}}}})
    runner = FlowRunner(flow)
    run = run_on_call(Call(), runner.run)
    assert run.apps()[1:] == [("speak", "flite|kal|from the hook")]
    assert json.loads(hook_server.requests[0].body)["tags"] == {"flow": "v2"}
    assert run.outcome.reason == "list_finished"
