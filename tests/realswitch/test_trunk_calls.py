"""Trunk callers through the real switch: admission (ACL 403, unknown number 404, limiter
503), a verb script end to end, and the 503 a carrier gets while the controller is away."""
from __future__ import annotations

from tests.realswitch.provision import create_tenant_with_trunk, unique_number


def test_say_then_hangup_completes_and_is_recorded(tenant, sipp):
    number = tenant.number_for([{"verb": "say", "text": "Hello from the real switch."},
                                {"verb": "hangup"}])
    result = sipp.call(number)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    assert record["status"] == "completed"
    assert record["answered_at"] is not None
    assert record["carrier_id"] is not None and str(record["carrier_id"]) == tenant.carrier_id
    assert record["duration_ms"] > 500  # the flite sentence was spoken, not skipped


def test_caller_outside_the_gateway_acl_is_refused_403(tenant, sipp):
    number = tenant.number_for([{"verb": "hangup"}])
    result = sipp.call(number, source_ip="127.0.0.2")
    assert result.refusal == 403, result.errors
    assert tenant.records(number) == []


def test_unknown_number_is_refused_404(tenant, sipp):
    result = sipp.call(unique_number("1999"))
    assert result.refusal == 404, result.errors


def test_account_over_its_concurrency_limit_gets_503(product, owner_engine, sipp):
    limited = create_tenant_with_trunk(product, owner_engine, max_concurrent_calls=1)
    number = limited.number_for([{"verb": "pause", "length": 3}, {"verb": "hangup"}])
    result = sipp.call(number, calls=2, rate=20)
    assert result.statuses() == [503], result.errors
    records = limited.wait_record(number, count=2)
    assert sorted(r["status"] for r in records) == ["completed", "refused"]


def test_calls_get_503_at_once_while_the_controller_is_down_and_connect_when_it_is_back(
        product, tenant, sipp):
    number = tenant.number_for([{"verb": "pause", "length": 1}, {"verb": "hangup"}])
    product.controller.stop()
    try:
        result = sipp.call(number)
        assert result.refusal == 503, result.errors
        assert result.stdout  # sipp ran
    finally:
        product.start_controller(wait=True)
    again = sipp.call(number)
    assert again.ok, again.errors


def test_a_caller_who_holds_and_resumes_gets_call_hold_and_call_resumed_on_the_bus(tenant, sipp):
    # CHANNEL_HOLD/UNHOLD are not on FreeSWITCH's myevents list: the session subscribes to them
    # (before, the real switch never delivered them and neither event was published)
    number = tenant.number_for([{"verb": "pause", "length": 10}, {"verb": "hangup"}])
    result = sipp.call(number, scenario="uac-hold-bye.xml")  # hold at 2.5 s, resume 1.5 s later, BYE
    assert result.ok, result.errors or result.stdout[-2000:]
    call_id = str(tenant.wait_record(number)[0]["call_id"])
    keys = [e["key"] for e in tenant.events("call.") if e["payload"].get("callId") == call_id]
    assert {"call.answered", "call.hold", "call.resumed", "call.ended"} <= set(keys), (call_id, keys)
    assert keys.index("call.answered") < keys.index("call.hold") < keys.index("call.resumed") \
        < keys.index("call.ended"), keys
