"""All SQLAlchemy models. Import from here: ``from app.models import Account, CallRecord``.

Tenant-owned tables carry ``account_id`` and are filtered by PostgreSQL row-level security
(see docs/data-model.md); ``Base.metadata`` is what Alembic compares against.
"""
from app.models.base import Base
from app.models.campaigns import Campaign, CampaignContact, DoNotCall
from app.models.contact_center import Agent, AgentQueue, Callback, Queue
from app.models.lcr import Lcr, LcrCarrierSetEntry, LcrRoute
from app.models.media import Recording, Transcript
from app.models.platform import ClusterConfig, ComplianceAccessLog, EventOutbox
from app.models.records import CallRecord, InteractionSegment, InteractionSummary, UsageMeter
from app.models.sip_targets import SipTargetHost
from app.models.sso import SsoProvider
from app.models.tenancy import Account, ServiceProvider
from app.models.trunks import Carrier, Gateway
from app.models.users import ApiKey, User
from app.models.voice import Application, CallFlow, PhoneNumber

# Tables whose every row belongs to one account (account_id NOT NULL).
TENANT_TABLES: tuple[str, ...] = (
    "users",
    "api_keys",
    "call_flows",
    "applications",
    "phone_numbers",
    "queues",
    "agents",
    "agent_queues",
    "callbacks",
    "campaigns",
    "campaign_contacts",
    "do_not_call",
    "call_records",
    "interaction_summary",
    "interaction_segment",
    "usage_meters",
    "compliance_access_log",
    "recordings",
    "transcripts",
    "sip_target_hosts",
    "sso_providers",
)
# Tables where account_id NULL means "platform-owned, readable by every tenant".
SHARED_TABLES: tuple[str, ...] = ("carriers", "gateways", "lcr", "lcr_routes", "lcr_carrier_set_entries")

__all__ = [
    "Account",
    "Agent",
    "AgentQueue",
    "ApiKey",
    "Application",
    "Base",
    "CallFlow",
    "CallRecord",
    "Callback",
    "Campaign",
    "CampaignContact",
    "Carrier",
    "ClusterConfig",
    "DoNotCall",
    "ComplianceAccessLog",
    "EventOutbox",
    "Gateway",
    "InteractionSegment",
    "InteractionSummary",
    "Lcr",
    "LcrCarrierSetEntry",
    "LcrRoute",
    "PhoneNumber",
    "Queue",
    "Recording",
    "ServiceProvider",
    "SipTargetHost",
    "SsoProvider",
    "SHARED_TABLES",
    "TENANT_TABLES",
    "Transcript",
    "UsageMeter",
    "User",
]
