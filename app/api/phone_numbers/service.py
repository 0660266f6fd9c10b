"""Phone number CRUD. Numbers are unique across the platform (they are the inbound routing key),
so a number held by any account is a 409; the application must be the account's own."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.common import flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.errors import ValidationFailed
from app.models import Application, PhoneNumber


def check_application(db: Session, account_id: uuid.UUID, app_id: uuid.UUID | None) -> Application | None:
    if app_id is None:
        return None
    app = db.scalar(select(Application).where(Application.id == app_id, Application.account_id == account_id))
    if app is None:
        raise ValidationFailed("No such application in this account.", code="invalid_reference",
                               details={"application_id": ["No such application."]})
    return app


def mode_of(app: Application | None) -> str:
    """What a freshly attached application means for the number's answering mode."""
    if app is not None and app.call_flow_sid is None and app.call_hook_url:
        return "webhook"
    return "call_flow"


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> PhoneNumber:
    app = check_application(db, account_id, data.get("application_id"))
    row = PhoneNumber(id=uuid.uuid4(), account_id=account_id, number=data["number"],
                      application_id=data.get("application_id"), answering_mode=mode_of(app))
    db.add(row)
    flush_or_raise(db, conflict="This number is already in use.", conflict_code="number_taken")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, number_id: uuid.UUID) -> PhoneNumber:
    return get_owned(db, PhoneNumber, number_id, account_id, what="phone_number")


def update(db: Session, account_id: uuid.UUID, number_id: uuid.UUID, data: dict[str, Any]) -> PhoneNumber:
    """Attach another application. The number's answering mode follows the new application and
    any remembered flow is dropped: it belonged to the previous configuration."""
    row = get_owned(db, PhoneNumber, number_id, account_id, what="phone_number", for_update=True)
    app = check_application(db, account_id, data["application_id"])
    if row.application_id != data["application_id"]:
        row.application_id = data["application_id"]
        row.answering_mode = mode_of(app)
        row.saved_call_flow_sid = None
    flush_or_raise(db, conflict="Conflicting change.")
    return row


def delete(db: Session, account_id: uuid.UUID, number_id: uuid.UUID) -> None:
    row = get_owned(db, PhoneNumber, number_id, account_id, what="phone_number", for_update=True)
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[PhoneNumber]:
    stmt = select(PhoneNumber).where(PhoneNumber.account_id == account_id)
    return keyset_page(db, stmt, [PhoneNumber.number, PhoneNumber.id], cursor=cursor, limit=limit)
