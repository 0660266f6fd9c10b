"""The FreeSWITCH bridge string for an LCR decision, and the failover cause classes."""
from __future__ import annotations

import pytest

from app.routing.causes import (
    FAILOVER_CAUSES,
    STOP_CAUSES,
    fail_on_single_reject_value,
    should_fail_over,
)
from app.routing.lcr import Explanation, bridge_string, compile_table
from tests.routing.world import build_rows, key_id, load_world

TABLE = compile_table(build_rows(load_world()))


def _split_vars(block: str) -> list[str]:
    """Split a {..}/[..] variable block on unescaped commas, as FreeSWITCH does."""
    out, cur, i = [], "", 0
    while i < len(block):
        if block[i] == "\\" and i + 1 < len(block):
            cur += block[i + 1]
            i += 2
            continue
        if block[i] == ",":
            out.append(cur)
            cur = ""
        else:
            cur += block[i]
        i += 1
    out.append(cur)
    return out


def test_given_route_with_three_carriers_when_building_bridge_then_sequential_gateways_in_try_order():
    decision = TABLE.explain("13105550100", key_id("acme"))
    dial = bridge_string(decision)
    assert dial.startswith("{fail_on_single_reject=")
    globals_block, legs = dial[1:].split("}", 1)
    endpoints = legs.split("|")
    assert len(endpoints) == len(decision.attempts) == 4
    for attempt, leg in zip(decision.attempts, endpoints):
        variables, endpoint = leg[1:].split("]", 1)
        assert endpoint == f"sofia/gateway/gw_{attempt.gateway_id.hex}/{attempt.dial_number}"
        assert f"lcr_carrier_id={attempt.carrier_id}" in _split_vars(variables)
        assert f"lcr_gateway_id={attempt.gateway_id}" in _split_vars(variables)
    # bravo has tech prefix 1234#, the others none
    assert endpoints[0].endswith("/1234#13105550100")
    assert endpoints[1].endswith("/13105550100")


def test_given_bridge_globals_when_parsed_like_freeswitch_then_one_variable_with_the_whole_cause_list():
    dial = bridge_string(TABLE.explain("13105550100", key_id("acme")))
    globals_block = dial[1:].split("}", 1)[0]
    parsed = _split_vars(globals_block)
    assert parsed == ["fail_on_single_reject=" + fail_on_single_reject_value()]


def test_given_extra_leg_vars_with_commas_when_building_then_escaped_and_delimiters_refused():
    decision = TABLE.explain("13105550100", key_id("acme"))
    dial = bridge_string(decision, leg_vars={"sip_h_X-Tags": "a,b"})
    assert "sip_h_X-Tags=a\\,b" in dial
    with pytest.raises(ValueError):
        bridge_string(decision, leg_vars={"x": "a|b"})


def test_given_unroutable_decision_when_building_bridge_then_refused_with_reason():
    with pytest.raises(ValueError, match="not a phone number"):
        bridge_string(TABLE.explain("sip:bob@example.com", None))
    with pytest.raises(ValueError):
        bridge_string(Explanation("1", "1", reason="no route matches this number"))


@pytest.mark.parametrize("cause", FAILOVER_CAUSES)
def test_given_carrier_fault_cause_when_bridge_fails_then_freeswitch_moves_to_next_carrier(cause):
    # FreeSWITCH stops the walk iff the cause name is a case-insensitive substring of the list
    assert cause.upper() not in fail_on_single_reject_value().upper()
    assert should_fail_over(cause)


@pytest.mark.parametrize("cause", STOP_CAUSES)
def test_given_callee_refusal_cause_when_bridge_fails_then_no_other_carrier_is_tried(cause):
    assert not should_fail_over(cause)


def test_given_cause_classes_then_they_do_not_overlap_and_cover_the_brief():
    assert not set(FAILOVER_CAUSES) & set(STOP_CAUSES)
    for cause in ("NORMAL_TEMPORARY_FAILURE", "DESTINATION_OUT_OF_ORDER", "NETWORK_OUT_OF_ORDER",
                  "RECOVERY_ON_TIMER_EXPIRE", "GATEWAY_DOWN", "SWITCH_CONGESTION"):
        assert cause in FAILOVER_CAUSES
    for cause in ("USER_BUSY", "CALL_REJECTED", "NO_ANSWER", "NO_USER_RESPONSE", "INVALID_NUMBER_FORMAT"):
        assert cause in STOP_CAUSES
