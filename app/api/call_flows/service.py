"""Call flow rules: the graph must pass ``app.flows.validate_flow`` (the engine's own parser),
and a flow in use (by an application, or remembered by a number in webhook mode) cannot be
deleted — the number could never switch back to it."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.api.applications.service import check_verb_urls
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.errors import Conflict
from app.flows import validate_flow
from app.models import Application, CallFlow, PhoneNumber


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> CallFlow:
    validate_flow(data["definition"])
    check_verb_urls(data["definition"], "definition")
    row = CallFlow(id=uuid.uuid4(), account_id=account_id, name=data["name"], definition=data["definition"])
    db.add(row)
    flush_or_raise(db, conflict="A call flow with these values already exists.")
    db.refresh(row)
    return row


def update(db: Session, account_id: uuid.UUID, flow_id: uuid.UUID, data: dict[str, Any]) -> CallFlow:
    row = get_owned(db, CallFlow, flow_id, account_id, what="call_flow", for_update=True)
    if "definition" in data:
        validate_flow(data["definition"])
        check_verb_urls(data["definition"], "definition")
    apply(row, data, ("name", "definition"))
    flush_or_raise(db, conflict="A call flow with these values already exists.")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, flow_id: uuid.UUID) -> CallFlow:
    return get_owned(db, CallFlow, flow_id, account_id, what="call_flow")


def delete(db: Session, account_id: uuid.UUID, flow_id: uuid.UUID) -> None:
    row = get_owned(db, CallFlow, flow_id, account_id, what="call_flow", for_update=True)
    apps = db.scalar(select(func.count()).select_from(Application).where(
        Application.account_id == account_id, Application.call_flow_sid == row.id))
    numbers = db.scalar(select(func.count()).select_from(PhoneNumber).where(
        PhoneNumber.account_id == account_id, PhoneNumber.saved_call_flow_sid == row.id))
    if apps or numbers:
        raise Conflict("The call flow is in use.", code="call_flow_in_use",
                       details={"applications": apps, "phone_numbers_saved": numbers})
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[CallFlow]:
    stmt = select(CallFlow).where(CallFlow.account_id == account_id)
    return keyset_page(db, stmt, [CallFlow.created_at, CallFlow.id], cursor=cursor, limit=limit)
