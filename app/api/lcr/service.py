"""LCR plan, route and carrier-set rules (own rows only; regex compiled as the router does)."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.api.carriers.service import announce
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.errors import NotFound, ValidationFailed
from app.models import Carrier, Lcr, LcrCarrierSetEntry, LcrRoute
from app.routing.lcr import compile_route_regex


def _changed(db: Session, account_id: uuid.UUID, ids: list[Any]) -> None:
    announce(db, account_id, "lcr", ids)


# --- plans -------------------------------------------------------------------------------

def list_plans(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Lcr]:
    stmt = select(Lcr).where(Lcr.account_id == account_id)
    return keyset_page(db, stmt, [Lcr.created_at, Lcr.id], cursor=cursor, limit=limit)


def get_plan(db: Session, account_id: uuid.UUID, lcr_id: uuid.UUID, *, for_update: bool = False) -> Lcr:
    return get_owned(db, Lcr, lcr_id, account_id, what="lcr", for_update=for_update)


def create_plan(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Lcr:
    row = Lcr(id=uuid.uuid4(), account_id=account_id)
    apply(row, data, ("name", "is_active", "priority"))
    db.add(row)
    flush_or_raise(db, conflict="A plan with these values already exists.")
    db.refresh(row)
    _changed(db, account_id, [row.id])
    return row


def update_plan(db: Session, account_id: uuid.UUID, lcr_id: uuid.UUID, data: dict[str, Any]) -> Lcr:
    row = get_plan(db, account_id, lcr_id, for_update=True)
    apply(row, data, ("name", "is_active", "priority"))
    flush_or_raise(db, conflict="A plan with these values already exists.")
    _changed(db, account_id, [row.id])
    return row


def delete_plan(db: Session, account_id: uuid.UUID, lcr_id: uuid.UUID) -> None:
    row = get_plan(db, account_id, lcr_id, for_update=True)
    db.delete(row)
    db.flush()
    _changed(db, account_id, [lcr_id])


# --- routes ------------------------------------------------------------------------------

def list_routes(db: Session, account_id: uuid.UUID, lcr_id: uuid.UUID) -> list[LcrRoute]:
    get_plan(db, account_id, lcr_id)
    return list(db.scalars(select(LcrRoute).where(LcrRoute.lcr_id == lcr_id, LcrRoute.account_id == account_id)
                           .order_by(LcrRoute.priority, LcrRoute.created_at, LcrRoute.id)))


def get_route(db: Session, account_id: uuid.UUID, route_id: uuid.UUID, *, for_update: bool = False) -> LcrRoute:
    return get_owned(db, LcrRoute, route_id, account_id, what="lcr_route", for_update=for_update)


def create_route(db: Session, account_id: uuid.UUID, lcr_id: uuid.UUID, data: dict[str, Any]) -> LcrRoute:
    get_plan(db, account_id, lcr_id)
    compile_route_regex(data["regex"])
    row = LcrRoute(id=uuid.uuid4(), account_id=account_id, lcr_id=lcr_id)
    apply(row, data, ("regex", "priority", "description"))
    db.add(row)
    flush_or_raise(db, conflict="This route already exists.")
    db.refresh(row)
    _changed(db, account_id, [lcr_id])
    return row


def update_route(db: Session, account_id: uuid.UUID, route_id: uuid.UUID, data: dict[str, Any]) -> LcrRoute:
    row = get_route(db, account_id, route_id, for_update=True)
    if "regex" in data:
        compile_route_regex(data["regex"])
    apply(row, data, ("regex", "priority", "description"))
    flush_or_raise(db, conflict="This route already exists.")
    _changed(db, account_id, [row.lcr_id])
    return row


def delete_route(db: Session, account_id: uuid.UUID, route_id: uuid.UUID) -> None:
    row = get_route(db, account_id, route_id, for_update=True)
    lcr_id = row.lcr_id
    db.delete(row)
    db.flush()
    _changed(db, account_id, [lcr_id])


# --- carrier set entries -----------------------------------------------------------------

def _check_carrier(db: Session, account_id: uuid.UUID, carrier_id: uuid.UUID) -> None:
    usable = db.scalar(select(Carrier.id).where(
        Carrier.id == carrier_id, or_(Carrier.account_id == account_id, Carrier.account_id.is_(None))))
    if usable is None:
        raise ValidationFailed("No such carrier for this account.", code="invalid_reference",
                               details={"carrier_id": ["No such carrier."]})


def list_entries(db: Session, account_id: uuid.UUID, route_id: uuid.UUID) -> list[LcrCarrierSetEntry]:
    get_route(db, account_id, route_id)
    return list(db.scalars(
        select(LcrCarrierSetEntry)
        .where(LcrCarrierSetEntry.lcr_route_id == route_id, LcrCarrierSetEntry.account_id == account_id)
        .order_by(LcrCarrierSetEntry.priority, LcrCarrierSetEntry.workload.desc(), LcrCarrierSetEntry.id)))


def add_entry(db: Session, account_id: uuid.UUID, route_id: uuid.UUID, data: dict[str, Any]) -> LcrCarrierSetEntry:
    route = get_route(db, account_id, route_id)
    _check_carrier(db, account_id, data["carrier_id"])
    row = LcrCarrierSetEntry(id=uuid.uuid4(), account_id=account_id, lcr_route_id=route_id)
    apply(row, data, ("carrier_id", "priority", "workload"))
    db.add(row)
    flush_or_raise(db, conflict="This carrier is already in the route's carrier set.", conflict_code="duplicate_carrier")
    db.refresh(row)
    _changed(db, account_id, [route.lcr_id])
    return row


def _entry(db: Session, account_id: uuid.UUID, route_id: uuid.UUID,
           entry_id: uuid.UUID) -> tuple[LcrCarrierSetEntry, LcrRoute]:
    route = get_route(db, account_id, route_id)
    row = get_owned(db, LcrCarrierSetEntry, entry_id, account_id, what="lcr_carrier_set_entry", for_update=True)
    if row.lcr_route_id != route.id:
        raise NotFound("No such carrier set entry on this route.", code="lcr_carrier_set_entry_not_found")
    return row, route


def update_entry(db: Session, account_id: uuid.UUID, route_id: uuid.UUID, entry_id: uuid.UUID,
                 data: dict[str, Any]) -> LcrCarrierSetEntry:
    row, route = _entry(db, account_id, route_id, entry_id)
    apply(row, data, ("priority", "workload"))
    flush_or_raise(db, conflict="Conflicting change.")
    _changed(db, account_id, [route.lcr_id])
    return row


def delete_entry(db: Session, account_id: uuid.UUID, route_id: uuid.UUID, entry_id: uuid.UUID) -> None:
    row, route = _entry(db, account_id, route_id, entry_id)
    db.delete(row)
    db.flush()
    _changed(db, account_id, [route.lcr_id])
