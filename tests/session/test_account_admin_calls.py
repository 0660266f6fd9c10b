"""Tenant administration seen by the call path: a limit changed after ``tenant create`` applies
to the next call (it is read with the number lookup), and a disabled tenant's numbers answer
404 like unknown numbers."""
from __future__ import annotations

from sqlalchemy import text

from app.accounts.admin import set_disabled, update_tenant
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record, executed, hangups
from tests.simulator import Call


def _wait(call, timeout: float = 10.0) -> None:
    assert call.wait(timeout), "simulated call did not finish"


def _subdomain(owner_conn, account_id) -> str:
    return owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"), {"a": account_id}).scalar_one()


def test_given_a_limit_raised_after_creation_when_a_second_call_arrives_then_it_is_admitted(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(max_concurrent_calls=1, app_json=[{"verb": "pause", "length": 30}])
    sub = _subdomain(owner_conn, account.id)
    held = simulate_call(Call(callee=number).hangup_after(1.5), controller)
    eventually(lambda: ("sleep", "30000") in executed(held), timeout=5, what="the held call running its pause")
    refused = simulate_call(Call(callee=number), controller)
    _wait(refused)
    assert hangups(refused) == ["NORMAL_CIRCUIT_CONGESTION"]
    update_tenant(sub, max_concurrent_calls=2)
    admitted = simulate_call(Call(callee=number).hangup_after(0.3), controller)
    _wait(admitted)
    assert hangups(admitted) == []  # ran its app until the caller hung up
    assert call_record(owner_conn, admitted.uuid)["status"] != "refused"
    _wait(held)


def test_given_a_disabled_tenant_when_its_number_is_called_then_404_and_enabled_again_it_answers(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "hangup"}])
    sub = _subdomain(owner_conn, account.id)
    set_disabled(sub, True)
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert executed(call) == [] and hangups(call) == ["UNALLOCATED_NUMBER"]
    set_disabled(sub, False)
    again = simulate_call(Call(callee=number), controller)
    _wait(again)
    assert hangups(again) == ["NORMAL_CLEARING"]
