"""Answering settings of a saved phone number: ``call_flow`` or ``webhook`` (SPEC rules).

* webhook mode needs the ``programmable-voice`` license (403 ``license_required``);
* the URL must be https:// and publicly reachable (422 ``unsafe_url``); method defaults to POST;
* the signing secret is stored encrypted and only its last four characters are ever shown;
* choosing webhook replaces the flow on the number and remembers it
  (``phone_numbers.saved_call_flow_sid``); switching back restores it;
* the change never affects other numbers: when the number's application is shared, the number
  gets a dedicated application ``Webhook — <number>`` (em dash) first.

Where the settings physically live: the application behind the number (``call_flow_sid`` or
``call_hook_url`` + secrets), because that is what the call session reads. Switching back to a
call flow clears the hook URL and its secrets on that application: a dormant credential is not
kept, and with no flow restored the hook must not silently take over.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.api.applications.service import check_flow_reference
from app.api.common import get_owned
from app.api.phone_numbers.service import answered_by, reported_mode
from app.crypto import encrypt_secret, last4
from app.errors import Forbidden
from app.models import Application, PhoneNumber
from app.webhooks.url_guard import check_url_on_save

WEBHOOK_LICENSE = "programmable-voice"
EM_DASH = "\u2014"


def dedicated_name(number: str, mode: str) -> str:
    prefix = "Webhook" if mode == "webhook" else "Call flow"
    return f"{prefix} {EM_DASH} {number}"


def available_modes(licenses: frozenset[str] | set[str]) -> list[str]:
    return ["call_flow", "webhook"] if WEBHOOK_LICENSE in licenses else ["call_flow"]


@dataclass(frozen=True)
class AnsweringView:
    number: PhoneNumber
    application: Application | None
    licenses: frozenset[str]

    def to_dict(self) -> dict[str, Any]:
        app, num = self.application, self.number
        webhook = None
        if num.answering_mode == "webhook" and app is not None:
            webhook = {
                "url": app.call_hook_url,
                "method": app.call_hook_method,
                "signing_secret_last4": app.signing_secret_last4,
                "has_signing_secret": app.signing_secret_encrypted is not None,
                "basic_auth_username": app.basic_auth_username,
                "has_basic_auth_password": app.basic_auth_password_encrypted is not None,
            }
        return {
            "phone_number_id": num.id,
            "number": num.number,
            "mode": reported_mode(num.answering_mode, app),
            "answered_by": answered_by(app),
            "available_modes": available_modes(self.licenses),
            "application_id": num.application_id,
            "call_flow_sid": app.call_flow_sid if (app is not None and num.answering_mode == "call_flow") else None,
            "saved_call_flow_sid": num.saved_call_flow_sid,
            "webhook": webhook,
        }


def _application(db: Session, account_id: uuid.UUID, num: PhoneNumber) -> Application | None:
    if num.application_id is None:
        return None
    return get_owned(db, Application, num.application_id, account_id, what="application", for_update=True)


def _is_shared(db: Session, account_id: uuid.UUID, num: PhoneNumber) -> bool:
    others = db.scalar(select(func.count()).select_from(PhoneNumber).where(
        PhoneNumber.account_id == account_id,
        PhoneNumber.application_id == num.application_id,
        PhoneNumber.id != num.id,
    ))
    return bool(others)


def _dedicated(db: Session, account_id: uuid.UUID, num: PhoneNumber, base: Application | None,
               mode: str) -> Application:
    """A new application for this number only, inheriting the say-defaults of ``base``."""
    app = Application(id=uuid.uuid4(), account_id=account_id, name=dedicated_name(num.number, mode),
                      call_hook_method="POST")
    if base is not None:
        app.language, app.voice = base.language, base.voice
        app.call_status_hook_url = base.call_status_hook_url
        if base.app_json is not None:
            app.app_json = base.app_json
    db.add(app)
    db.flush()
    num.application_id = app.id
    return app


def _clear_hook(app: Application) -> None:
    app.call_hook_url = None
    app.call_hook_method = "POST"
    app.signing_secret_encrypted = None
    app.signing_secret_last4 = None
    app.basic_auth_username = None
    app.basic_auth_password_encrypted = None


def view(db: Session, account_id: uuid.UUID, number_id: uuid.UUID, licenses: frozenset[str]) -> AnsweringView:
    num = get_owned(db, PhoneNumber, number_id, account_id, what="phone_number")
    app = None
    if num.application_id is not None:
        app = get_owned(db, Application, num.application_id, account_id, what="application")
    return AnsweringView(num, app, licenses)


def set_answering(db: Session, account_id: uuid.UUID, number_id: uuid.UUID, data: dict[str, Any],
                  licenses: frozenset[str]) -> AnsweringView:
    mode = data["mode"]
    if mode == "webhook" and WEBHOOK_LICENSE not in licenses:
        raise Forbidden(f"The account has no '{WEBHOOK_LICENSE}' license.", code="license_required",
                        details={"license": WEBHOOK_LICENSE})
    num = get_owned(db, PhoneNumber, number_id, account_id, what="phone_number", for_update=True)
    if mode == "webhook":
        check_url_on_save(data["url"])  # https:// only, public address only → 422 unsafe_url
        app = _to_webhook(db, account_id, num, data)
    else:
        app = _to_call_flow(db, account_id, num, data)
    db.flush()
    return AnsweringView(num, app, licenses)


def _to_webhook(db: Session, account_id: uuid.UUID, num: PhoneNumber, data: dict[str, Any]) -> Application:
    app = _application(db, account_id, num)
    if num.answering_mode != "webhook":
        # remember the flow this number answered with, to restore it on the way back
        num.saved_call_flow_sid = app.call_flow_sid if app is not None else None
    if app is None or _is_shared(db, account_id, num):
        app = _dedicated(db, account_id, num, app, "webhook")
    app.call_flow_sid = None
    app.call_hook_url = data["url"]
    app.call_hook_method = data.get("method", "POST" if num.answering_mode != "webhook" else app.call_hook_method)
    if "signing_secret" in data:
        secret = data["signing_secret"]
        app.signing_secret_encrypted = encrypt_secret(secret) if secret else None
        app.signing_secret_last4 = last4(secret) if secret else None
    if "basic_auth_username" in data:
        app.basic_auth_username = data["basic_auth_username"]
    if "basic_auth_password" in data:
        password = data["basic_auth_password"]
        app.basic_auth_password_encrypted = encrypt_secret(password) if password else None
    num.answering_mode = "webhook"
    return app


def _to_call_flow(db: Session, account_id: uuid.UUID, num: PhoneNumber, data: dict[str, Any]) -> Application | None:
    app = _application(db, account_id, num)
    if "call_flow_sid" in data:
        flow = data["call_flow_sid"]
        check_flow_reference(db, account_id, flow)
    elif num.answering_mode == "webhook":
        flow = num.saved_call_flow_sid
    else:
        flow = app.call_flow_sid if app is not None else None
    current = app.call_flow_sid if app is not None else None
    if app is None and flow is None:
        num.answering_mode = "call_flow"
        return None
    if app is None or (flow != current and _is_shared(db, account_id, num)):
        app = _dedicated(db, account_id, num, app, "call_flow")
    if num.answering_mode == "webhook":
        _clear_hook(app)
    app.call_flow_sid = flow
    num.answering_mode = "call_flow"
    num.saved_call_flow_sid = None
    return app
