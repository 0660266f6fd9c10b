"""The do-not-call list and the calling window hold on the real switch: a progressive campaign of
three contacts, paced by the real ``sbc workers`` for one registered sipp agent, dials only the
contact that is allowed. The number on the account's do-not-call list ends ``do_not_call`` and
the number whose local time is about midnight stays ``pending``, put off to 08:00 in its zone
(``waiting_for: calling_window``); neither is ever offered to the carrier, whose own SIP trace
holds exactly one INVITE, for the allowed number.

The clock: ``sbc workers`` reads the real one (there is no setting to move it, and none should
exist in a product process), so the contacts' zones are chosen from it instead — the allowed one
an ``Etc/GMT`` zone where it is about noon now, the other one where it is about midnight — and
the window holds or not whatever the hour of the run. The picker with an injected clock is
tests/campaigns/test_picking.py."""
from __future__ import annotations

import uuid
import zoneinfo
from datetime import datetime, time, timezone

from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch.provision import poll, unique_number
from tests.realswitch.sipp import _messages
from tests.realswitch.test_campaign_dialer import _trunk_and_agent


def _zone_at(local_hour: int) -> str:
    """An ``Etc/GMT`` zone whose local time is within the hour after ``local_hour``:00 now
    (Etc/GMT-N is UTC+N; the valid N run from -14 to +12)."""
    offset = (local_hour - datetime.now(timezone.utc).hour) % 24
    offset = offset - 24 if offset > 14 else offset
    return f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"


def _invites(trace: str) -> list[str]:
    """The request lines of the INVITEs a sipp carrier received (its -trace_msg log)."""
    return [text.split("\n", 1)[0] for _, direction, text in _messages(trace)
            if direction == "received" and text.startswith("INVITE ")]


def test_a_campaign_dials_only_its_allowed_contact_never_the_listed_number_nor_the_one_outside_its_window(
        product, routing_tenant, sipp, real_switch, owner_engine):
    tenant = routing_tenant
    carrier = sipp.carrier(scenario="carrier-busy-486.xml", extra=("-trace_msg",))
    try:
        prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch, carrier, wrap_up_seconds=0)
        listed, night, allowed = (f"{prefix}55501{n}" for n in (40, 41, 42))
        night_zone = _zone_at(0)
        tenant.admin.post("/api/do-not-call", {"numbers": [{"number": f"+{listed}", "reason": "asked not to"}]})
        caller_id = unique_number()
        tenant.admin.post("/api/phone-numbers", {"number": caller_id})
        campaign = tenant.admin.post("/api/campaigns", {
            "name": f"camp-{uuid.uuid4().hex[:6]}", "dialer_mode": "progressive", "caller_id": caller_id,
            "carrier_id": carrier_id, "agent_group_ids": [queue["id"]],
            "retry_policy": {"busy": {"delay_seconds": 1, "max_attempts": 1}}})
        path = f"/api/campaigns/{campaign['id']}/contacts"
        for number, zone in ((listed, _zone_at(12)), (night, night_zone), (allowed, _zone_at(12))):
            tenant.admin.post(path, {"contacts": [{"phone_number": f"+{number}", "time_zone": zone}]})
        phone = sip_agents.register(sipp, real_switch, agent, seconds=20)
        try:
            tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
            tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})

            def contacts() -> dict[str, dict]:
                return {c["phone_number"]: c for c in tenant.admin.get(path)["items"]}

            settled = poll(lambda: (c := contacts())[allowed]["status"] == "failed" and c, 30)
            assert settled, f"{contacts()}\n{product.workers.log_tail()}\n{product.controller.log_tail()}"
            seen = {n: (c["status"], c["attempts"], c["last_result"], c["waiting_for"]) for n, c in settled.items()}
            assert seen == {listed: ("do_not_call", 0, None, None),
                            night: ("pending", 0, None, "calling_window"),
                            allowed: ("failed", 1, "busy", None)}, seen
            opens = datetime.fromisoformat(settled[night]["next_attempt_at"]).astimezone(zoneinfo.ZoneInfo(night_zone))
            assert opens.time() == time(8, 0) and opens > datetime.now(timezone.utc), opens

            (originate,) = outbound.outbox(owner_engine, "call.originate", "campaignId", campaign["id"])
            assert originate["payload"]["phoneNumber"] == allowed
            record = poll(lambda: outbound.record(owner_engine, originate["payload"]["callId"]), 10)
            assert record and record["status"] == "busy", record
            stamped = poll(lambda: (r := outbound.record(owner_engine, originate["payload"]["callId"]))
                           and r["contact_id"] and r, 10)
            assert stamped and (str(stamped["contact_id"]), stamped["amd_result"]) == (settled[allowed]["id"], None)
            attempts = [(e["payload"]["contactId"], e["payload"]["outcome"]) for e in tenant.events("campaign.attempt")
                        if e["payload"]["campaignId"] == campaign["id"]]
            assert attempts == [(settled[allowed]["id"], "busy")]
        finally:
            tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
            phone.stop()
    finally:
        trace = carrier.stop().messages
    invites = _invites(trace)
    assert len(invites) == 1 and allowed in invites[0], invites
