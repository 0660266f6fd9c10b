"""A FreeSWITCH that hangs with its sockets open must not keep its calls waiting forever: the
node watchdog declares it frozen and its callback ends the sessions of that node's calls."""
from __future__ import annotations

from sqlalchemy import text

from app.voice.reconcile import close_calls_from
from app.voice.watchdog import NodeWatchdog
from esl.inbound import InboundConnection
from tests.plugins.eventually import eventually
from tests.simulator import Call


def _failure_reasons(owner_conn, call_id: str) -> list[str]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT body->'payload'->>'reason' FROM event_outbox WHERE routing_key = 'call.failed'"
        " AND body->'payload'->>'callId' = :c"), {"c": call_id})]


def test_given_a_live_call_when_its_freeswitch_freezes_then_the_watchdog_ends_its_session(
        controller, simulate_call, inbound_sim, number_with_app, owner_conn, services):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 60}])
    host, port = inbound_sim.address
    node = InboundConnection(host, port, "ClueCon", backoff_initial=0.05, backoff_max=0.2,
                             connect_timeout=0.3)
    node.connect()
    dog = NodeWatchdog(node, lambda: close_calls_from(services.live_calls, [host]),
                       interval=0.05, timeout=0.2, strikes=3).start()
    try:
        call = simulate_call(Call(callee=number), controller)
        eventually(lambda: call.uuid in services.live_calls)
        assert services.limiter.counts(account.id)[0] == 1

        inbound_sim.freeze()
        call.freeze()  # the same hung process: its call socket stays open and silent
        eventually(lambda: dog.frozen_count == 1)
        eventually(lambda: not controller.connections)
        assert services.events.flush(timeout=5)

        assert _failure_reasons(owner_conn, call.uuid) == ["connection_lost"]
        assert services.limiter.counts(account.id)[0] == 0
        assert services.live_calls == {}

        inbound_sim.thaw()
        eventually(lambda: node.connected and node.reconnects == 1)
    finally:
        dog.stop()
        node.close()
