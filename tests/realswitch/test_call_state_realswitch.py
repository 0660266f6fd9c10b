"""GET /api/calls/:callId on the real switch: a call placed with POST /api/calls reports the
state and reason FreeSWITCH's answer leads to — busy carrier -> failed/busy (USER_BUSY), an
answering one -> completed — and the record carries the same hangup_reason. Also a carrier with
``e164_leading_plus``: the switch dials ``+<number>`` and the call completes."""
from __future__ import annotations

from tests.plugins.eventually import NotYet, eventually
from tests.realswitch import outbound


def _state(tenant, call_id: str) -> dict:
    return tenant.admin.get(f"/api/calls/{call_id}")


def _final(tenant, call_id: str, seen: list[str]) -> dict | None:
    """The call's final state (None if none came in time), every state passed on the way
    appended to ``seen``."""
    def final() -> dict | None:
        state = _state(tenant, call_id)
        if not seen or seen[-1] != state["state"]:
            seen.append(state["state"])
        return state if state["state"] in ("completed", "failed") else None

    try:
        return eventually(final, timeout=outbound.CALL_WAIT_SECONDS, what=f"call {call_id} final")
    except NotYet:
        return None


def test_a_call_to_a_busy_callee_is_failed_busy_with_the_same_reason_on_the_record(
        product, routing_tenant, carriers, owner_engine):
    prefix = outbound.prefix()
    busy = carriers._start("carrier-busy-486.xml", None)
    carrier_id, gateway_id = outbound.carrier(routing_tenant, "busy", busy.port)
    outbound.route(product, routing_tenant, prefix, [carrier_id])
    outbound.wait_gateways(product.switch, gateway_id)
    caller_id, app = outbound.originate_app(routing_tenant)

    placed = routing_tenant.admin.post("/api/calls", {"to": f"+{prefix}5550104", "from": caller_id,
                                                      "application_sid": app, "timeout": 20})
    seen: list[str] = []
    final = _final(routing_tenant, placed["call_id"], seen)

    assert final, f"no final state for {placed['call_id']} (seen {seen})\n{product.controller.log_tail()}"
    assert (final["state"], final["reason"], final["hangup_cause"]) == ("failed", "busy", "USER_BUSY"), final
    assert seen[0] in ("queued", "ringing"), seen
    assert outbound.record(owner_engine, placed["call_id"])["hangup_reason"] == "busy"


def test_an_answered_call_goes_to_completed_through_the_live_states(product, routing_tenant, carriers):
    prefix = outbound.prefix()
    answering = carriers.answering("PCMU")
    carrier_id, gateway_id = outbound.carrier(routing_tenant, "answers", answering.port)
    outbound.route(product, routing_tenant, prefix, [carrier_id])
    outbound.wait_gateways(product.switch, gateway_id)
    caller_id, app = outbound.originate_app(routing_tenant)

    placed = routing_tenant.admin.post("/api/calls", {"to": f"+{prefix}5550105", "from": caller_id,
                                                      "application_sid": app, "timeout": 20})
    seen: list[str] = []
    final = _final(routing_tenant, placed["call_id"], seen)

    assert final, f"no final state (seen {seen})\n{product.controller.log_tail()}"
    assert (final["state"], final["reason"], final["record_status"]) == ("completed", None, "completed"), final
    assert final["answered_at"] is not None
    order = ["queued", "ringing", "in-progress", "completed"]
    assert [order.index(s) for s in seen] == sorted(order.index(s) for s in seen), seen  # never backwards


def test_a_carrier_with_e164_leading_plus_is_dialled_with_the_plus_and_answers(
        product, routing_tenant, carriers, owner_engine):
    prefix = outbound.prefix()
    answering = carriers.answering("PCMU")
    carrier = routing_tenant.admin.post("/api/carriers", {"name": "plus", "e164_leading_plus": True,
                                                          "tech_prefix": ""})
    gateway = routing_tenant.admin.post(f"/api/carriers/{carrier['id']}/gateways",
                                        {"ipv4": "127.0.0.1", "port": answering.port, "inbound": False})
    outbound.route(product, routing_tenant, prefix, [carrier["id"]])
    outbound.wait_gateways(product.switch, gateway["id"])
    caller_id, app = outbound.originate_app(routing_tenant)
    log_from = product.switch.log_offset()

    placed = routing_tenant.admin.post("/api/calls", {"to": f"{prefix}5550106", "from": caller_id,
                                                      "application_sid": app, "timeout": 20})
    final = _final(routing_tenant, placed["call_id"], [])

    assert final, f"no final state\n{product.controller.log_tail()}"
    assert (final["state"], final["record_status"]) == ("completed", "completed"), final
    assert f"sofia/external/+{prefix}5550106" in product.switch.log_since(log_from)
    assert str(outbound.record(owner_engine, placed["call_id"])["gateway_id"]) == gateway["id"]
