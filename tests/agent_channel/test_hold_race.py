"""Hold and unhold of one agent leg never overlap on the switch (app/voice/call_control.py): the
real switch left the caller looping hold music when an unhold reached it ~100 ms after the hold
(tests/realswitch/test_agent_channel_realswitch.py). On the simulator: the unhold is sent only
after the leg's CHANNEL_HOLD; requests superseded while they waited are not sent."""
from __future__ import annotations

import gevent

from app.calls.control import ControlRequest
from tests.agent_channel.test_channel_calls import _queue_call, desk  # noqa: F401 - fixture
from tests.plugins.eventually import eventually
from tests.simulator import Call
from tests.simulator.scenario import RingingPhone


def _connected(channel_server, desk, run_on_call):  # noqa: F811
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone()
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone))
    offer = client.expect("offer")
    assert client.command("accept", offerId=offer["offerId"])["ok"] is True
    phone.answer()
    client.expect("call", lambda m: m["phase"] == "connected")
    return client, run, offer["offerId"], phone.b_leg_uuid


def _spy(control) -> list[tuple[str, str]]:
    """What the controller's node sent and received, in order (commands and hold events)."""
    node = control.nodes()[0]
    seen: list[tuple[str, str]] = []
    send = node.bgapi

    def bgapi(command, *a, **kw):
        seen.append(("sent", command))
        return send(command, *a, **kw)

    node.bgapi = bgapi
    for name in ("CHANNEL_HOLD", "CHANNEL_UNHOLD"):
        node.on(name, lambda e: seen.append(("event", e.name)))
    return seen


def test_given_hold_then_unhold_at_once_on_the_channel_then_the_unhold_is_sent_only_after_the_legs_hold_event(
        channel_server, desk, run_on_call, call_control):  # noqa: F811
    client, run, call_id, leg = _connected(channel_server, desk, run_on_call)
    seen = _spy(call_control)
    assert client.command("hold")["ok"] is True
    assert client.command("unhold")["ok"] is True
    eventually(lambda: call_control.done + call_control.coalesced >= 2, timeout=15)
    sent = [c for kind, c in seen if kind == "sent" and c.startswith("uuid_hold")]
    if sent:  # the usual case: the hold left before the unhold arrived
        assert sent == [f"uuid_hold {leg}", f"uuid_hold off {leg}"], seen
        order = [x for x in seen if x[0] == "event" or x[1].startswith("uuid_hold")]
        assert order.index(("event", "CHANNEL_HOLD")) < order.index(("sent", f"uuid_hold off {leg}")), order
    else:  # both arrived together: coalesced, nothing sent, the leg stays as it was
        assert call_control.coalesced == 2
    assert client.command("hangup")["ok"] is True
    assert run.get(timeout=40).outcome.reason == "queue_answered"


def test_given_an_unhold_and_a_hold_arriving_while_a_hold_is_in_flight_then_only_the_first_hold_is_sent(
        channel_server, desk, run_on_call, call_control):  # noqa: F811
    client, run, call_id, leg = _connected(channel_server, desk, run_on_call)
    request = dict(account_id=desk.account_id, call_id=call_id, leg_id=leg)
    seen = _spy(call_control)
    runs = [gevent.spawn(call_control.run, ControlRequest(action=a, **request)) for a in ("hold", "unhold", "hold")]
    gevent.joinall(runs, timeout=20)
    assert [r.value for r in runs] == [True, True, True]
    assert [c for kind, c in seen if kind == "sent"][0] == f"uuid_hold {leg}"
    assert [c for kind, c in seen if kind == "sent" and c.startswith("uuid_hold")] == [f"uuid_hold {leg}"]
    assert call_control.coalesced == 2  # the unhold was superseded, the second hold found it held
    assert client.command("hangup")["ok"] is True
    run.get(timeout=40)


def test_given_hold_and_unhold_both_waiting_behind_another_action_then_neither_is_sent(
        channel_server, desk, run_on_call, call_control):  # noqa: F811
    client, run, call_id, leg = _connected(channel_server, desk, run_on_call)
    request = dict(account_id=desk.account_id, call_id=call_id, leg_id=leg)
    seen = _spy(call_control)
    runs = [gevent.spawn(call_control.run, ControlRequest(action="dtmf", digits="5", **request)),
            gevent.spawn(call_control.run, ControlRequest(action="hold", **request)),
            gevent.spawn(call_control.run, ControlRequest(action="unhold", **request))]
    gevent.joinall(runs, timeout=20)
    assert [c for kind, c in seen if kind == "sent"] == [f"uuid_send_dtmf {call_id} 5"]
    assert call_control.coalesced == 2
    assert client.command("hangup")["ok"] is True
    run.get(timeout=40)


def test_given_two_controllers_then_one_consumes_every_call_control_request_so_one_legs_requests_stay_ordered(
        inbound_sim, amqp_vhost):
    import uuid

    from app.calls.control import request_control
    from app.db.engine import platform_session
    from app.events.consumer import RecentIds
    from app.events.publisher import OutboxPublisher
    from app.voice.call_control import CallControl, start_call_control_consumer
    from esl.inbound import InboundConnection

    node = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    node.connect()
    consumers = [start_call_control_consumer(CallControl(lambda: [node]), RecentIds()) for _ in range(2)]
    publisher = OutboxPublisher(poll_seconds=0.2).start()
    try:
        assert all(c.ready.wait(10) for c in consumers)
        account, call, leg = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
        with platform_session() as db:
            for n in range(20):
                request_control(db, ControlRequest(account_id=account, call_id=call, leg_id=leg,
                                                   action="hold" if n % 2 == 0 else "unhold"))
        assert publisher.flush(15)
        eventually(lambda: sum(c.delivered for c in consumers) >= 20, timeout=15)
        assert sorted(c.delivered for c in consumers) == [0, 20]
    finally:
        publisher.stop()
        for c in consumers:
            c.stop()
        node.close()
