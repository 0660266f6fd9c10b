"""What a call needs before it runs: its account, the account's limits and the application.

Inbound: dialled number → account (the one cross-tenant read of the call path, platform role:
until the number is looked up, the call belongs to no tenant). Originated: the account and
application are already known from the ``call.originate`` request the controller dialled.
One query fetches everything so call setup costs a single round trip; secrets are decrypted
here and live only in the call's memory.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Optional

from sqlalchemy import bindparam, select

from app.calls.originate import OriginatedLeg, agent_connect_verbs
from app.campaigns.amd import AmdSettings
from app.campaigns.safe_harbour import wait_verbs
from app.contact.endpoints import contact_profile
from app.crypto import decrypt_secret
from app.db.engine import platform_read, platform_session
from app.models import Account, Agent, Application, CallFlow, Campaign, PhoneNumber, Queue, ServiceProvider


@dataclass(frozen=True)
class AppSettings:
    """An application as the call session uses it (SPEC "Application")."""

    id: Optional[uuid.UUID]         # None: a verb list the platform built (callback → agent)
    call_flow_sid: Optional[uuid.UUID]
    flow_definition: Optional[dict[str, Any]]
    call_hook_url: Optional[str]
    call_hook_method: str
    call_status_hook_url: Optional[str]
    app_json: Optional[list[dict[str, Any]]]
    language: Optional[str]
    voice: Optional[str]
    signing_secret: Optional[str]
    basic_auth: Optional[tuple[str, str]]


@dataclass(frozen=True)
class CallRoute:
    number: str
    account_id: uuid.UUID
    service_provider_id: uuid.UUID
    account_limit: int
    service_provider_limit: int
    application: Optional[AppSettings]
    direction: str = "inbound"      # the product's view: inbound | outbound (originated)
    # the account's directory domain (its subdomain), set on a callback leg: the agent's
    # ``user/`` dial resolves ``${domain_name}`` to it (docs/agents.md "Callbacks")
    domain: Optional[str] = None
    # the sofia profile of ``sip`` dial targets (an agent contact ``sofia/internal/…``: internal)
    sip_profile: str = "external"
    # a campaign call's answering-machine detection, run before the agent is dialled
    # (app/voice/amd.py); None: none (every other call, and campaigns with ``amd`` off)
    amd: Optional[AmdSettings] = None


# The inbound lookup runs once per call: a Core statement built once, the application's columns
# read as plain values (loading an ORM Application per call, with its identity map, cost as much
# CPU as the query itself). ``app_`` labels keep its columns apart from the account's.
_APPLICATIONS = Application.__table__
_APP_PREFIX = "app_"
_INBOUND_ROUTE = (
    select(PhoneNumber.number, Account.id.label("account_id"), Account.service_provider_id,
           Account.max_concurrent_calls.label("account_limit"),
           ServiceProvider.max_concurrent_calls.label("sp_limit"),
           *[c.label(_APP_PREFIX + c.key) for c in _APPLICATIONS.c],
           CallFlow.definition.label("flow_definition"))
    .join(Account, Account.id == PhoneNumber.account_id)
    .join(ServiceProvider, ServiceProvider.id == Account.service_provider_id)
    .outerjoin(_APPLICATIONS, _APPLICATIONS.c.id == PhoneNumber.application_id)
    .outerjoin(CallFlow, CallFlow.id == _APPLICATIONS.c.call_flow_sid)
    .where(PhoneNumber.number == bindparam("number"), Account.disabled_at.is_(None))  # disabled: 404
)


def find_inbound_route(number: str) -> Optional[CallRoute]:
    """None when no account owns ``number`` (digits only, as stored)."""
    with platform_read() as conn:  # one statement: no transaction round trips
        row = conn.execute(_INBOUND_ROUTE, {"number": number}).first()
    if row is None:
        return None
    application = None
    if row.app_id is not None:
        columns = row._mapping
        app = SimpleNamespace(**{c.key: columns[_APP_PREFIX + c.key] for c in _APPLICATIONS.c})
        application = _settings(app, row.flow_definition)
    return CallRoute(
        number=row.number,
        account_id=row.account_id,
        service_provider_id=row.service_provider_id,
        account_limit=row.account_limit,
        service_provider_limit=row.sp_limit,
        application=application,
    )


def find_originated_route(leg: OriginatedLeg, number: str) -> Optional[CallRoute]:
    """The route of a leg this platform dialled; None when the account is gone. A missing or
    foreign application (or an agent without a contact) gives a route without an application:
    the session then ends the call as it would an inbound call to a number with none."""
    account_id, application_id = leg.account_id, leg.application_id
    with platform_session() as session:
        row = session.execute(
            select(Account.id.label("account_id"), Account.service_provider_id,
                   Account.max_concurrent_calls.label("account_limit"),
                   ServiceProvider.max_concurrent_calls.label("sp_limit"))
            .join(ServiceProvider, ServiceProvider.id == Account.service_provider_id)
            .where(Account.id == account_id, Account.disabled_at.is_(None))
        ).first()
        if row is None:
            return None
        app_row = None
        if application_id is not None:
            app_row = session.execute(
                select(Application, CallFlow.definition.label("flow_definition"))
                .outerjoin(CallFlow, CallFlow.id == Application.call_flow_sid)
                .where(Application.id == application_id, Application.account_id == account_id)
            ).first()
        contact = domain = None
        if leg.agent_id is not None:
            agent = session.execute(
                select(Agent.contact, Agent.sip_username, Agent.sip_password_encrypted, Account.subdomain)
                .join(Account, Account.id == Agent.account_id)
                .where(Agent.id == leg.agent_id, Agent.account_id == account_id)).first()
            if agent is not None:
                domain = agent.subdomain
                # an agent with SIP credentials is its registered endpoint on the internal
                # profile (the queue's offers ring the same user); else its contact
                contact = (f"user/{agent.sip_username}"
                           if agent.sip_username and agent.sip_password_encrypted else agent.contact)
        amd = None
        if leg.campaign_id is not None:
            setting = session.execute(select(Campaign.amd, Campaign.amd_message).where(
                Campaign.id == leg.campaign_id, Campaign.account_id == account_id)).first()
            amd = AmdSettings.of(setting.amd, setting.amd_message) if setting is not None else None
        waiting = _campaign_wait(session, leg) if leg.agent_id is None and app_row is None else None
    application = None
    if app_row is not None:
        application = _settings(app_row.Application, app_row.flow_definition)
    elif waiting:
        application = AppSettings(
            id=None, call_flow_sid=None, flow_definition=None, call_hook_url=None,
            call_hook_method="POST", call_status_hook_url=None, app_json=waiting, language=None,
            voice=None, signing_secret=None, basic_auth=None)
    elif contact:
        application = AppSettings(
            id=None, call_flow_sid=None, flow_definition=None, call_hook_url=None,
            call_hook_method="POST", call_status_hook_url=None,
            app_json=agent_connect_verbs(contact), language=None, voice=None,
            signing_secret=None, basic_auth=None)
    return CallRoute(
        number=number, account_id=row.account_id, service_provider_id=row.service_provider_id,
        account_limit=row.account_limit, service_provider_limit=row.sp_limit,
        application=application, direction="outbound", domain=domain,
        sip_profile=contact_profile(contact) if application is not None and app_row is None else "external",
        amd=amd if application is not None and app_row is None else None,
    )


def _campaign_wait(session: Any, leg: OriginatedLeg) -> Optional[list[dict[str, Any]]]:
    """A power/predictive campaign's answered customer: wait for an agent of the leg's group,
    else the campaign's safe-harbour message (app/campaigns/safe_harbour.py). None when the
    leg is no such call, or its campaign or group is gone (the call then ends as one without
    an application)."""
    if leg.campaign_id is None or leg.queue_id is None:
        return None
    row = session.execute(
        select(Queue.name, Campaign.safe_harbour_text, Campaign.safe_harbour_url)
        .join(Campaign, Campaign.account_id == Queue.account_id)
        .where(Queue.id == leg.queue_id, Queue.account_id == leg.account_id,
               Campaign.id == leg.campaign_id)).first()
    return wait_verbs(row.name, row.safe_harbour_text, row.safe_harbour_url) if row else None


def _settings(app: Application | SimpleNamespace, flow_definition: Optional[dict[str, Any]]) -> AppSettings:
    """``app``: an Application row, or its columns read off the one inbound-route statement."""
    basic_auth = None
    if app.basic_auth_username and app.basic_auth_password_encrypted:
        basic_auth = (app.basic_auth_username, decrypt_secret(app.basic_auth_password_encrypted))
    return AppSettings(
        id=app.id,
        call_flow_sid=app.call_flow_sid,
        flow_definition=flow_definition,
        call_hook_url=app.call_hook_url,
        call_hook_method=app.call_hook_method or "POST",
        call_status_hook_url=app.call_status_hook_url,
        app_json=app.app_json,
        language=app.language,
        voice=app.voice,
        signing_secret=(decrypt_secret(app.signing_secret_encrypted)
                        if app.signing_secret_encrypted else None),
        basic_auth=basic_auth,
    )
