"""The simulated ``originate`` fails where FreeSWITCH 1.10.12 fails (measured on the real switch,
issues 9 and 15): it reads its argument with the switch's own splitting, so an unquoted
``&socket(h:p async full)`` loses ``async full``; and a fixed ``origination_uuid`` in ``{}``
collides on the second ``|`` leg when the first one failed."""
from __future__ import annotations

import gevent
import gevent.event
import pytest

from esl.errors import EslError
from esl.inbound import InboundConnection
from tests.simulator.fsparse import originate_parts, separate_blank

CALL_ID = "11111111-2222-3333-4444-555555555555"


@pytest.mark.parametrize("text, parts, expected", [
    ("a b  c", 10, ["a", "b", "c"]),
    ("x '&socket(h:1 async full)' y", 10, ["x", "&socket(h:1 async full)", "y"]),
    ("a b c d", 2, ["a", "b c d"]),                       # the last part keeps the rest
    ("a\\ b c", 10, ["a\\ b", "c"]),                     # an escaped space does not split
    ("it\\'s 'q'", 10, ["it's", "q"]),
])
def test_given_text_when_split_like_switch_separate_string_then_parts_match_freeswitch(text, parts, expected):
    assert separate_blank(text, parts) == expected


def test_given_unquoted_socket_app_when_originate_reads_it_then_async_full_become_dialplan_and_context():
    parsed = originate_parts("{a=1}sofia/gateway/gw/1 &socket(127.0.0.1:8084 async full)")
    assert (parsed.app, parsed.app_data, parsed.dialplan, parsed.context) == (
        "socket", "127.0.0.1:8084", "async", "full)")
    quoted = originate_parts("{a=1}sofia/gateway/gw/1 '&socket(127.0.0.1:8084 async full)'")
    assert (quoted.app, quoted.app_data, quoted.dialplan) == ("socket", "127.0.0.1:8084 async full", None)


@pytest.fixture
def node(inbound_sim):
    conn = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    conn.connect()
    yield conn
    conn.close()


def _socket_probe(outbound_server):
    """A controller stand-in that records the connect reply and whether ``linger`` works."""
    seen: dict = {}
    done = gevent.event.Event()

    def app(conn):
        data = conn.connect()
        seen["control"], seen["mode"] = data.get("Control"), data.get("Socket-Mode")
        try:
            conn.linger()
            seen["linger"] = "ok"
        except EslError as exc:
            seen["linger"] = str(exc)
        done.set()

    return outbound_server(app), seen, done


def test_given_unquoted_socket_app_when_leg_answers_then_socket_is_not_full_and_linger_is_refused(
        inbound_sim, node, outbound_server):
    server, seen, done = _socket_probe(outbound_server)
    host, port = server.address
    body = node.api(f"originate sofia/gateway/gw/1 &socket({host}:{port} async full)")
    assert body.startswith("+OK")
    assert done.wait(5)
    assert (seen["control"], seen["mode"]) == ("single-channel", "static")
    assert "command not found" in seen["linger"]


def test_given_quoted_socket_app_when_leg_answers_then_socket_is_async_full(inbound_sim, node, outbound_server):
    server, seen, done = _socket_probe(outbound_server)
    host, port = server.address
    assert node.api(f"originate sofia/gateway/gw/1 '&socket({host}:{port} async full)'").startswith("+OK")
    assert done.wait(5)
    assert (seen["control"], seen["mode"], seen["linger"]) == ("full", "async", "ok")


def test_given_global_origination_uuid_when_first_leg_fails_then_second_leg_is_a_duplicate_uuid(inbound_sim, node):
    inbound_sim.fail_legs["gw_a"] = "NORMAL_TEMPORARY_FAILURE"
    body = node.api(f"originate {{origination_uuid={CALL_ID}}}sofia/gateway/gw_a/1|sofia/gateway/gw_b/1 &park()")
    assert body.strip() == "-ERR DESTINATION_OUT_OF_ORDER"
    assert node.api(f"uuid_exists {CALL_ID}") == "true"  # the failed leg is not destroyed yet
    gevent.sleep(inbound_sim.failed_leg_release_seconds + 0.02)  # scenario: the modelled release delay passes
    assert node.api(f"uuid_exists {CALL_ID}") == "false"


def test_given_callee_refusal_listed_in_fail_on_single_reject_when_first_leg_fails_then_walk_stops(inbound_sim, node):
    inbound_sim.fail_legs["gw_a"] = "USER_BUSY"
    body = node.api("originate {fail_on_single_reject=USER_BUSY\\,CALL_REJECTED}"
                    "sofia/gateway/gw_a/1|sofia/gateway/gw_b/1 &park()")
    assert body.strip() == "-ERR USER_BUSY"
    inbound_sim.fail_legs["gw_a"] = "NORMAL_TEMPORARY_FAILURE"
    body = node.api("originate {fail_on_single_reject=USER_BUSY\\,CALL_REJECTED}"
                    "sofia/gateway/gw_a/1|sofia/gateway/gw_b/1 &park()")
    assert body.startswith("+OK")


@pytest.mark.parametrize("second_uuid, expected", [
    (CALL_ID, "-ERR DESTINATION_OUT_OF_ORDER"),               # per-leg [] collides just the same
    ("11111111-2222-3333-4444-555555555556", "+OK 11111111-2222-3333-4444-555555555556"),
])
def test_given_per_leg_origination_uuids_when_first_leg_fails_then_only_distinct_ids_fail_over(
        inbound_sim, node, second_uuid, expected):
    inbound_sim.fail_legs["gw_a"] = "NORMAL_TEMPORARY_FAILURE"
    body = node.api(f"originate [origination_uuid={CALL_ID}]sofia/gateway/gw_a/1|"
                    f"[origination_uuid={second_uuid}]sofia/gateway/gw_b/1 &park()")
    assert body.strip() == expected
