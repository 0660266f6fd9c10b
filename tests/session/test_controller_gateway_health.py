"""``system.gateway.down``/``up`` through the controller exactly as ``sbc controller`` wires it
(GatewayHealth publishing with ``emit``): the unit tests' stand-in publisher once accepted a
call shape the real one refused, and every sofia::gateway_state raised (issue 9 item 5)."""
from __future__ import annotations

from sqlalchemy import text

from app.routing.lcr import gateway_name
from tests.plugins.eventually import eventually
from tests.session.routing_seed import two_carrier_plan
from tests.session.test_controller import running_controller  # noqa: F401 (fixture)


def _gateway_events(owner_conn, gateway_id) -> list[tuple[str, dict]]:
    rows = owner_conn.execute(text(
        "SELECT routing_key, body->'payload' FROM event_outbox WHERE routing_key LIKE 'system.gateway.%' "
        "AND body->'payload'->>'gatewayId' = :g ORDER BY created_at"), {"g": str(gateway_id)}).all()
    return [(r[0], r[1]) for r in rows]


def test_given_sofia_reports_a_gateway_down_then_up_when_the_controller_handles_it_then_both_are_published(
        running_controller, inbound_sim, make_account, owner_conn):  # noqa: F811
    account = make_account()
    carrier, gateway, _ = two_carrier_plan(account.id)
    running_controller.routing.reload()
    name = gateway_name(gateway)
    inbound_sim.set_gateway(name, True)    # sofia starts every gateway up, silently
    inbound_sim.set_gateway(name, False)   # OPTIONS ping failed: sofia::gateway_state DOWN
    eventually(lambda: len(_gateway_events(owner_conn, gateway)) == 1, what="the gateway's down event")
    inbound_sim.set_gateway(name, True)
    eventually(lambda: len(_gateway_events(owner_conn, gateway)) == 2, what="the gateway's up event")

    (down_key, down), (up_key, up) = _gateway_events(owner_conn, gateway)
    assert (down_key, up_key) == ("system.gateway.down", "system.gateway.up")
    assert (down["carrierId"], down["address"], down["gateway"]) == (str(carrier), "192.0.2.10:5060", name)
    assert (down["state"], down["sipStatus"], up["state"]) == ("down", "503", "up")
