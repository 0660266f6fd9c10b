"""An application that breaks in an unexpected way (not a webhook failure, not a hang-up) must
still end the call: the caller is hung up, never left in dead air, and the call is recorded."""
from __future__ import annotations

from tests.session.conftest import call_record, hangups, outbox_keys
from tests.simulator import Call


def test_given_stored_app_json_that_no_longer_parses_when_call_arrives_then_caller_is_hung_up_and_recorded(
        controller, simulate_call, number_with_app, owner_conn, services):
    # app_json is validated by the API; a row written before a schema change is not.
    account, number, _ = number_with_app(app_json=[{"verb": "no-such-verb"}])

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10), "simulated call did not finish"

    assert hangups(call), "the controller never hung up the caller"
    record = call_record(owner_conn, call.uuid)
    assert record is not None
    assert record["webhook_error"] == "application_crashed"
    keys = outbox_keys(owner_conn, record["trace_id"])
    assert "call.failed" in keys and keys[-1] == "call.ended"
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}
