"""Read the routing tables into plain rows (the only module that knows the table layout).

The controller needs every tenant's plans and every gateway, so it reads on the explicit
cross-tenant path (platform_session); ``account_id`` narrows the read to one tenant plus the
platform rows it may use (explain for one account).
"""
from __future__ import annotations

import logging
import uuid

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.crypto import SecretDecryptionFailed, decrypt_secret
from app.db.engine import platform_session
from app.models import Account, Carrier, Gateway, Lcr, LcrCarrierSetEntry, LcrRoute
from app.routing.rows import (
    AccountRow,
    CarrierEntryRow,
    CarrierRow,
    GatewayRow,
    PlanRow,
    RouteRow,
    RoutingRows,
)

log = logging.getLogger(__name__)


def _scoped(model, account_id: uuid.UUID | None):
    stmt = select(model)
    if account_id is not None:
        stmt = stmt.where(or_(model.account_id.is_(None), model.account_id == account_id))
    return stmt


def _register_password(gateway: Gateway) -> str | None:
    """The password the switch registers with. One undecryptable password (the secret key
    changed) must not stop every carrier's routing: that gateway registers without it and
    shows FAIL_WAIT, and the log says why."""
    if not gateway.register or gateway.register_password_encrypted is None:
        return None
    try:
        return decrypt_secret(gateway.register_password_encrypted)
    except SecretDecryptionFailed:
        log.error("gateway %s: its register_password cannot be decrypted with the configured key; "
                  "set it again", gateway.id)
        return None


def read_rows(session: Session, account_id: uuid.UUID | None = None) -> RoutingRows:
    carriers = tuple(
        CarrierRow(c.id, c.name, c.account_id, c.tech_prefix or "", c.is_active, c.e164_leading_plus, c.srtp)
        for c in session.scalars(_scoped(Carrier, account_id))
    )
    gateways = tuple(
        GatewayRow(g.id, g.carrier_id, str(g.ipv4).split("/")[0] if g.ipv4 is not None else "",
                   g.netmask, g.port, g.transport, g.inbound, g.outbound, g.is_active, g.host,
                   g.register, g.register_username,
                   _register_password(g),
                   g.register_realm, g.register_expiry, g.register_retry)
        for g in session.scalars(_scoped(Gateway, account_id))
    )
    plans = tuple(
        PlanRow(p.id, p.name, p.account_id, p.priority, p.is_active, p.service_provider_id)
        for p in session.scalars(_scoped(Lcr, account_id))
    )
    routes = tuple(
        RouteRow(r.id, r.lcr_id, r.regex, r.priority)
        for r in session.scalars(_scoped(LcrRoute, account_id))
    )
    entries = tuple(
        CarrierEntryRow(e.id, e.lcr_route_id, e.carrier_id, e.priority, e.workload)
        for e in session.scalars(_scoped(LcrCarrierSetEntry, account_id))
    )
    account_stmt = select(Account.id, Account.service_provider_id)
    if account_id is not None:
        account_stmt = account_stmt.where(Account.id == account_id)
    accounts = tuple(AccountRow(a, sp) for a, sp in session.execute(account_stmt))
    return RoutingRows(carriers, gateways, plans, routes, entries, accounts)


def load_rows(account_id: uuid.UUID | None = None) -> RoutingRows:
    with platform_session() as session:
        return read_rows(session, account_id)


def account_id_for_subdomain(subdomain: str) -> uuid.UUID | None:
    with platform_session() as session:
        return session.scalar(select(Account.id).where(Account.subdomain == subdomain.lower()))
