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


def answered_by(app: Application | None) -> str | None:
    """What drives a call to a number on ``app``, by the call session's own precedence
    (app/voice/call_handlers.py; the values of ``call.started``'s ``handler``): ``flow``,
    ``webhook``, ``websocket``, ``app_json``, or None (nothing: the call is refused)."""
    if app is None:
        return None
    if app.call_flow_sid is not None:
        return "flow"
    if app.call_hook_url:
        return "websocket" if app.call_hook_url.startswith(("ws://", "wss://")) else "webhook"
    return "app_json" if app.app_json else None


def reported_mode(stored: str, app: Application | None) -> str | None:
    """SPEC's answering mode is ``Call flow`` or ``Your server (webhook)``: a number whose
    application answers with a static ``app_json`` list is in neither, so it reports null (and
    ``answered_by: app_json``) instead of a call-flow mode it is not in."""
    return None if answered_by(app) == "app_json" else stored


def view(db: Session, account_id: uuid.UUID, row: PhoneNumber,
         apps: dict[uuid.UUID, Application] | None = None) -> dict[str, Any]:
    """The number as the API shows it; ``apps``: the page's applications, read once."""
    app = None
    if row.application_id is not None:
        app = (apps or {}).get(row.application_id) or check_application(db, account_id, row.application_id)
    return {"id": row.id, "number": row.number, "application_id": row.application_id,
            "answering_mode": reported_mode(row.answering_mode, app), "answered_by": answered_by(app),
            "created_at": row.created_at}


def views(db: Session, account_id: uuid.UUID, rows: list[PhoneNumber]) -> list[dict[str, Any]]:
    ids = {r.application_id for r in rows if r.application_id is not None}
    apps = {a.id: a for a in db.scalars(select(Application).where(
        Application.account_id == account_id, Application.id.in_(ids)))} if ids else {}
    return [view(db, account_id, r, apps) for r in rows]


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


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int,
              containing: str | None = None) -> Page[PhoneNumber]:
    """``containing``: digits only (the query schema checks it), so no LIKE wildcard can be in it."""
    stmt = select(PhoneNumber).where(PhoneNumber.account_id == account_id)
    if containing:
        stmt = stmt.where(PhoneNumber.number.contains(containing, autoescape=True))
    return keyset_page(db, stmt, [PhoneNumber.number, PhoneNumber.id], cursor=cursor, limit=limit)
