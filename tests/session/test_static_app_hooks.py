"""An application without a webhook (app_json) may still name an actionHook on gather: the
digits are posted there like a webhook's follow-up request, and its reply drives the call."""
from __future__ import annotations

import json

from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, executed
from tests.simulator import Call


def test_given_app_json_gather_with_action_hook_when_caller_presses_digits_then_hook_gets_them_and_its_verbs_run(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply.json([{"verb": "say", "text": "Thanks for choosing one"}]))
    account, number, app_id = number_with_app(app_json=[
        {"verb": "gather", "input": ["dtmf"], "numDigits": 1, "timeout": 2,
         "actionHook": hook_server.url("/menu"), "say": {"text": "Press one"}}])

    call = simulate_call(Call(callee=number).press("1"), controller)
    assert call.wait(10)

    assert [r.path for r in hook_server.requests] == ["/menu"]
    body = json.loads(hook_server.requests[0].body)
    assert (body["digits"], body["accountSid"], body["applicationSid"]) == ("1", str(account.id), str(app_id))
    assert executed(call)[-1][0] == "speak" and "Thanks for choosing one" in executed(call)[-1][1]
    assert call_record(owner_conn, call.uuid)["webhook_error"] is None
