"""One row in every table for a tenant, written on the platform path (as a dispatcher would).

Used by the RLS tests: with two tenants seeded this way plus platform-owned rows, every
policy has something to hide and something to show.
"""
from __future__ import annotations

import uuid
from datetime import date, datetime, timezone
from typing import Any

from sqlalchemy import delete

from app.db.engine import platform_session
from app.models import (
    Agent,
    AgentQueue,
    ApiKey,
    Application,
    Callback,
    CallFlow,
    CallRecord,
    Campaign,
    CampaignContact,
    Carrier,
    ComplianceAccessLog,
    DoNotCall,
    Gateway,
    InteractionSegment,
    InteractionSummary,
    Lcr,
    LcrCarrierSetEntry,
    LcrRoute,
    PhoneNumber,
    Queue,
    Recording,
    SipTargetHost,
    SsoProvider,
    Transcript,
    UsageMeter,
)
from tests.plugins.database import unique_number


def seed_platform_routing() -> dict[str, uuid.UUID]:
    """A platform carrier with a gateway and a platform-level LCR plan using it."""
    with platform_session() as s:
        carrier = Carrier(name="platform-carrier")
        s.add(carrier)
        s.flush()
        gateway = Gateway(carrier_id=carrier.id, ipv4="203.0.113.10", netmask=32)
        lcr = Lcr(name="platform-plan")
        s.add_all([gateway, lcr])
        s.flush()
        route = LcrRoute(lcr_id=lcr.id, regex="^1", priority=1)
        s.add(route)
        s.flush()
        entry = LcrCarrierSetEntry(lcr_route_id=route.id, carrier_id=carrier.id, priority=1)
        s.add(entry)
        s.flush()
        return {"carrier": carrier.id, "gateway": gateway.id, "lcr": lcr.id, "route": route.id, "entry": entry.id}


def remove_platform_routing(ids: dict[str, uuid.UUID]) -> None:
    """Undo ``seed_platform_routing`` (a platform plan applies to every tenant's routing)."""
    with platform_session() as s:
        for model, key in ((LcrCarrierSetEntry, "entry"), (LcrRoute, "route"), (Lcr, "lcr"),
                           (Gateway, "gateway"), (Carrier, "carrier")):
            s.execute(delete(model).where(model.id == ids[key]))


def seed_tenant(account: Any) -> dict[str, Any]:
    """Every tenant-owned table gets one row of ``account``; returns the ids by table name."""
    acc = account.id
    now = datetime.now(timezone.utc)
    with platform_session() as s:
        flow = CallFlow(account_id=acc, name="main", definition={"start": "a"})
        s.add(flow)
        s.flush()
        app = Application(account_id=acc, name="app", call_flow_sid=flow.id)
        queue = Queue(account_id=acc, name="sales")
        carrier = Carrier(account_id=acc, name="own-carrier")
        lcr = Lcr(account_id=acc, name="own-plan")
        campaign = Campaign(account_id=acc, name="spring")
        s.add_all([app, queue, carrier, lcr])
        s.flush()
        campaign.carrier_id = carrier.id
        campaign.agent_group_ids = [queue.id]
        s.add(campaign)
        agent = Agent(account_id=acc, user_id=account.admin_user_id, state="available")
        gateway = Gateway(account_id=acc, carrier_id=carrier.id, ipv4="198.51.100.7", netmask=24)
        route = LcrRoute(account_id=acc, lcr_id=lcr.id, regex="^44", priority=1)
        number = PhoneNumber(account_id=acc, number=unique_number(), application_id=app.id)
        s.add_all([agent, gateway, route, number])
        s.flush()
        trace = uuid.uuid4()
        rows = {
            "agent_queues": AgentQueue(account_id=acc, agent_id=agent.id, queue_id=queue.id),
            "callbacks": Callback(account_id=acc, queue_id=queue.id, phone_number="15550100"),
            "campaign_contacts": CampaignContact(account_id=acc, campaign_id=campaign.id, phone_number="15550101"),
            "lcr_carrier_set_entries": LcrCarrierSetEntry(account_id=acc, lcr_route_id=route.id, carrier_id=carrier.id),
            "api_keys": ApiKey(account_id=acc, name="k", key_hash=uuid.uuid4().hex * 2, display_prefix="sk_abcdefg"),
            "call_records": CallRecord(
                account_id=acc, trace_id=trace, call_id=uuid.uuid4(), direction="inbound",
                started_at=now, status="completed", queue_id=queue.id, agent_id=agent.id,
            ),
            "interaction_summary": InteractionSummary(account_id=acc, trace_id=trace, talk_ms=1000),
            "interaction_segment": InteractionSegment(account_id=acc, trace_id=trace, agent_id=agent.id, started_at=now),
            "usage_meters": UsageMeter(
                account_id=acc, service_provider_id=account.service_provider_id, product="voice-minutes",
                period=date(now.year, now.month, 1), quantity=5,
            ),
            "compliance_access_log": ComplianceAccessLog(account_id=acc, user_id=account.admin_user_id, action="export"),
        }
        s.add_all(rows.values())
        s.flush()
        recording = Recording(id=uuid.uuid4(), account_id=acc, call_id=rows["call_records"].call_id,
                              trace_id=trace, format="wav", stereo=True, path="/r/a.wav",
                              status="transcribed")
        s.add(recording)
        s.flush()
        rows["recordings"] = recording
        rows["transcripts"] = Transcript(
            id=uuid.uuid4(), account_id=acc, recording_id=recording.id, call_id=recording.call_id,
            trace_id=trace, engine="pocketsphinx", text="hello", segments=[], sentiment={},
            audio_seconds=1, processing_ms=1)
        s.add(rows["transcripts"])
        rows["sip_target_hosts"] = SipTargetHost(id=uuid.uuid4(), account_id=acc, host="pbx.example.com")
        s.add(rows["sip_target_hosts"])
        rows["sso_providers"] = SsoProvider(
            id=uuid.uuid4(), account_id=acc, issuer="https://idp.example.com", client_id="sbc",
            client_secret_encrypted="not-a-real-token", display_name="Example IdP")
        s.add(rows["sso_providers"])
        rows["do_not_call"] = DoNotCall(id=uuid.uuid4(), account_id=acc, number="15550100")
        s.add(rows["do_not_call"])
        s.flush()
        ids: dict[str, Any] = {name: row.id for name, row in rows.items() if hasattr(row, "id")}
        ids.update(
            users=account.admin_user_id, call_flows=flow.id, applications=app.id, queues=queue.id,
            carriers=carrier.id, lcr=lcr.id, campaigns=campaign.id, agents=agent.id, gateways=gateway.id,
            lcr_routes=route.id, phone_numbers=number.id,
        )
        return ids
