"""The dial verb names the carrier whose gateway answered (app.routing.lcr.answering_carrier):
read from the caller's leg after the bridge, only when it carries *this* dial's id."""
from __future__ import annotations

import uuid

from app.routing.lcr import bridge_string, compile_table
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, PlanRow, RouteRow, RoutingRows
from tests.simulator import Call
from tests.verbs.directory_fake import DirectoryContact

NUMBER = "+14155550100"


def _router():
    cheap, backup, gw_a, gw_b, plan, route = (uuid.uuid4() for _ in range(6))
    table = compile_table(RoutingRows(
        carriers=(CarrierRow(id=cheap, name="cheap"), CarrierRow(id=backup, name="backup")),
        gateways=(GatewayRow(id=gw_a, carrier_id=cheap, ipv4="192.0.2.10", outbound=True),
                  GatewayRow(id=gw_b, carrier_id=backup, ipv4="192.0.2.11", outbound=True)),
        plans=(PlanRow(id=plan, name="default"),),
        routes=(RouteRow(id=route, lcr_id=plan, regex="^1"),),
        entries=(CarrierEntryRow(id=uuid.uuid4(), lcr_route_id=route, carrier_id=cheap, priority=1),
                 CarrierEntryRow(id=uuid.uuid4(), lcr_route_id=route, carrier_id=backup, priority=2))))
    return (lambda number: bridge_string(table.explain(number, None))), (cheap, gw_a), (backup, gw_b)


def test_given_first_carrier_fails_over_when_the_second_answers_then_dial_names_the_second(run_on_call):
    router, _, (backup, gw_b) = _router()
    run = run_on_call(Call().bridge_answers(talk=0.02, leg=1),
                      [{"verb": "dial", "target": [{"type": "phone", "name": NUMBER}]}], router=router)
    assert run.error is None
    assert (run.outcome.data["carrierId"], run.outcome.data["gatewayId"]) == (str(backup), str(gw_b))
    assert run.ctx.dial_carrier == (backup, gw_b)


def test_given_an_earlier_dials_carrier_on_the_leg_when_a_user_answers_then_no_carrier_is_credited(run_on_call):
    router, (cheap, gw_a), _ = _router()
    stale = {"sbc_dial_id": uuid.uuid4().hex, "lcr_carrier_id": str(cheap), "lcr_gateway_id": str(gw_a)}
    run = run_on_call(Call(variables=stale).bridge_answers(talk=0.02),
                      [{"verb": "dial", "target": [{"type": "user", "name": "alice"},
                                                   {"type": "phone", "name": NUMBER}]}], router=router,
                      contact=DirectoryContact("alice"))
    assert run.error is None and run.outcome.data["dialStatus"] == "SUCCESS"
    assert run.outcome.data["carrierId"] is None and run.ctx.dial_carrier is None


def test_given_shipped_config_when_pcma_caller_is_bridged_to_a_pcmu_only_callee_then_it_answers(run_on_call):
    """fs-conf/vars.xml's media_mix_inbound_outbound_codecs: the bridged leg offers the trunk
    codecs too, so the callee picks one and FreeSWITCH transcodes."""
    run = run_on_call(Call(codec="PCMA").bridge_answers(talk=0.02, codecs=("PCMU",)),
                      [{"verb": "dial", "target": [{"type": "user", "name": "bob"}]}],
                      contact=DirectoryContact("bob"))
    assert run.error is None and run.outcome.data["dialStatus"] == "SUCCESS"


def test_given_the_switch_default_when_pcma_caller_is_bridged_to_a_g729_only_callee_then_488(run_on_call):
    """Without it (FreeSWITCH's default) only the caller's codec is offered: 488, as the real
    switch answered before the fix (issue 9 item 6)."""
    run = run_on_call(Call(codec="PCMA", variables={"media_mix_inbound_outbound_codecs": "false"})
                      .bridge_answers(talk=0.02, codecs=("G729",)),
                      [{"verb": "dial", "target": [{"type": "user", "name": "bob"}]}],
                      contact=DirectoryContact("bob"))
    assert run.outcome.data["cause"] == "INCOMPATIBLE_DESTINATION"
