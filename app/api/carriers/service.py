"""Carrier and gateway rules; every committed change announces routing.config.changed."""
from __future__ import annotations

import uuid
from typing import Any

import redis
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.api.carriers.schemas import host_problem, network_problem
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.crypto import encrypt_secret
from app.errors import Forbidden, NotFound, ValidationFailed
from app.events.payloads import emit, routing_changed
from app.models import Carrier, Gateway
from app.routing.explain import down_gateways

CARRIER_FIELDS = ("name", "description", "is_active", "tech_prefix", "e164_leading_plus", "srtp")
GATEWAY_FIELDS = ("ipv4", "host", "netmask", "port", "transport", "inbound", "outbound", "is_active",
                  "register", "register_username", "register_realm", "register_expiry", "register_retry")


def announce(db: Session, account_id: uuid.UUID, what: str, ids: list[Any]) -> None:
    """routing.config.changed inside the caller's transaction: published only if it commits."""
    emit("routing.config.changed", routing_changed(what=what, ids=ids), account_id=account_id, session=db)


# --- carriers ----------------------------------------------------------------------------

def visible_carrier(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID) -> Carrier:
    """The account's own carrier or a platform carrier (read access)."""
    row = db.scalar(select(Carrier).where(Carrier.id == carrier_id,
                                          or_(Carrier.account_id == account_id, Carrier.account_id.is_(None))))
    if row is None:
        raise NotFound("No such carrier.", code="carrier_not_found")
    return row


def own_carrier(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID) -> Carrier:
    """For changes: a platform carrier is 403 platform_read_only, anything else not ours is 404."""
    row = visible_carrier(db, account_id, carrier_id)
    if row.account_id is None:
        raise Forbidden("Platform carriers are managed by the operator.", code="platform_read_only")
    return get_owned(db, Carrier, carrier_id, account_id, what="carrier", for_update=True)


def list_carriers(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Carrier]:
    stmt = select(Carrier).where(or_(Carrier.account_id == account_id, Carrier.account_id.is_(None)))
    return keyset_page(db, stmt, [Carrier.created_at, Carrier.id], cursor=cursor, limit=limit)


def create_carrier(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Carrier:
    row = Carrier(id=uuid.uuid4(), account_id=account_id)
    apply(row, data, CARRIER_FIELDS)
    db.add(row)
    flush_or_raise(db, conflict="A carrier with these values already exists.")
    db.refresh(row)
    announce(db, account_id, "carriers", [row.id])
    return row


def update_carrier(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID, data: dict[str, Any]) -> Carrier:
    row = own_carrier(db, account_id, carrier_id)
    apply(row, data, CARRIER_FIELDS)
    flush_or_raise(db, conflict="A carrier with these values already exists.")
    announce(db, account_id, "carriers", [row.id])
    return row


def delete_carrier(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID) -> None:
    """Deleting a carrier removes its gateways and LCR entries (cascade); campaigns lose the trunk."""
    row = own_carrier(db, account_id, carrier_id)
    db.delete(row)
    db.flush()
    announce(db, account_id, "carriers", [carrier_id])


# --- gateways ----------------------------------------------------------------------------

def _check_network(data: dict[str, Any]) -> None:
    if data.get("host") is not None:
        problem = host_problem(data["netmask"], data["inbound"], data["outbound"])
    elif data.get("ipv4") is None:  # the body's shape, like any missing field
        raise ValidationFailed("The request did not pass validation.", details={"json": {"ipv4": [
            "Missing data for required field: give ipv4 (an address or network) or host (outbound only)."]}})
    else:
        problem = network_problem(data["ipv4"], data["netmask"], data["inbound"], data["outbound"])
    if problem:
        raise ValidationFailed("The gateway address is not usable.", code="invalid_gateway", details=problem)


def _write_password(row: Gateway, data: dict[str, Any]) -> None:
    if "register_password" in data:
        secret = data["register_password"]
        row.register_password_encrypted = encrypt_secret(secret) if secret else None


def _check_registration(row: Gateway) -> None:
    """A registering gateway needs both credentials (else 422, not the CHECK's 500)."""
    if row.register and (not row.register_username or row.register_password_encrypted is None):
        raise ValidationFailed("A registering gateway needs credentials.", code="invalid_gateway", details={
            "register": ["register needs register_username and register_password."]})


def list_gateways(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID) -> list[Gateway]:
    get_owned(db, Carrier, carrier_id, account_id, what="carrier")
    return with_health(list(db.scalars(select(Gateway).where(Gateway.carrier_id == carrier_id,
                                                             Gateway.account_id == account_id)
                                       .order_by(Gateway.created_at, Gateway.id))))


def with_health(gateways: list[Gateway], client: redis.Redis | None = None) -> list[Gateway]:
    """Set each gateway's ``health`` from the live store the LCR reads (docs/trunks.md "Gateway
    health"), so the console shows what routing does now: ``up``/``down`` for a gateway sofia
    pings (active and outbound), ``not_probed`` for one it does not, ``unknown`` when the store
    did not answer. One HGETALL for the whole list (``client``: the store, default the configured one)."""
    down, known = down_gateways(client)
    for gateway in gateways:
        if not (gateway.is_active and gateway.outbound):
            gateway.health = "not_probed"
        elif not known:
            gateway.health = "unknown"
        else:
            gateway.health = "down" if gateway.id in down else "up"
    return gateways


def create_gateway(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID, data: dict[str, Any]) -> Gateway:
    own_carrier(db, account_id, carrier_id)
    # a host-name gateway is outbound only, so it is not inbound unless the body says so
    values = {"netmask": 32, "inbound": data.get("host") is None, "outbound": True, **data}
    _check_network(values)
    row = Gateway(id=uuid.uuid4(), account_id=account_id, carrier_id=carrier_id)
    apply(row, values, GATEWAY_FIELDS)
    _write_password(row, data)
    _check_registration(row)
    db.add(row)
    flush_or_raise(db, conflict="This gateway already exists.")
    db.refresh(row)
    announce(db, account_id, "gateways", [row.id])
    return row


def get_gateway(db: Session, account_id: uuid.UUID, gateway_id: uuid.UUID) -> Gateway:
    return with_health([get_owned(db, Gateway, gateway_id, account_id, what="gateway")])[0]


def update_gateway(db: Session, account_id: uuid.UUID, gateway_id: uuid.UUID, data: dict[str, Any]) -> Gateway:
    row = get_owned(db, Gateway, gateway_id, account_id, what="gateway", for_update=True)
    merged = {"ipv4": None if row.ipv4 is None else str(row.ipv4), "host": row.host,
              "netmask": row.netmask, "inbound": row.inbound, "outbound": row.outbound, **data}
    if data.get("host") is not None:   # one address: the one sent replaces the other
        merged["ipv4"] = data["ipv4"] = None
    elif data.get("ipv4") is not None:
        merged["host"] = data["host"] = None
    _check_network(merged)
    apply(row, data, GATEWAY_FIELDS)
    _write_password(row, data)
    _check_registration(row)
    flush_or_raise(db, conflict="This gateway already exists.")
    db.refresh(row)
    announce(db, account_id, "gateways", [row.id])
    return row


def delete_gateway(db: Session, account_id: uuid.UUID, gateway_id: uuid.UUID) -> None:
    row = get_owned(db, Gateway, gateway_id, account_id, what="gateway", for_update=True)
    db.delete(row)
    db.flush()
    announce(db, account_id, "gateways", [gateway_id])
