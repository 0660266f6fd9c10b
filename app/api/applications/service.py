"""Application rules: references stay inside the account, URLs pass the SSRF guard on save,
and a static verb list is validated all-or-nothing exactly as a webhook reply would be."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.crypto import encrypt_secret
from app.errors import Conflict, UnsafeUrl, ValidationFailed
from app.models import Application, CallFlow, PhoneNumber
from app.verbs import parse_verb_list
from app.webhooks.url_guard import check_url_on_save

PLAIN_FIELDS = ("name", "call_flow_sid", "call_hook_url", "call_hook_method",
                "call_status_hook_url", "app_json", "language", "voice", "basic_auth_username")


def check_flow_reference(db: Session, account_id: uuid.UUID, flow_id: uuid.UUID | None,
                         field: str = "call_flow_sid") -> None:
    if flow_id is None:
        return
    found = db.scalar(select(CallFlow.id).where(CallFlow.id == flow_id, CallFlow.account_id == account_id))
    if found is None:
        raise ValidationFailed("No such call flow in this account.", code="invalid_reference",
                               details={field: ["No such call flow."]})


def _check_named(url: str, field: str, *, allow_ws: bool, path: str | None = None) -> None:
    """check_url_on_save, its refusal naming the body field (and the JSON Pointer inside it),
    so the console shows it beside the right field."""
    try:
        check_url_on_save(url, allow_ws=allow_ws)
    except UnsafeUrl as exc:
        located = {"field": field} if path is None else {"field": field, "path": path}
        exc.details = {**(exc.details or {}), **located}
        raise


def validate_urls(data: dict[str, Any]) -> None:
    """The SPEC's save-time refusal: not https(/wss) or not public → 422 unsafe_url."""
    if data.get("call_hook_url"):
        _check_named(data["call_hook_url"], "call_hook_url", allow_ws=True)
    if data.get("call_status_hook_url"):
        _check_named(data["call_status_hook_url"], "call_status_hook_url", allow_ws=False)


# Verb fields holding a URL the platform will fetch or call (redirect/gather/queue/record hooks,
# play media, listen socket). Their scheme is the verb schema's business; the address is ours.
VERB_URL_KEYS = frozenset({"url", "actionHook", "timeoutHook", "statusHook"})


def _pointer_token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def verb_urls(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (JSON Pointer, URL) inside a verb list or flow definition."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from verb_urls(item, f"{path}/{index}")
    elif isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}/{_pointer_token(key)}"
            if key in VERB_URL_KEYS and isinstance(item, str):
                yield here, item
            else:
                yield from verb_urls(item, here)


def check_verb_urls(value: Any, field: str = "app_json") -> None:
    """The save-time SSRF refusal for URLs inside a saved verb list or flow definition (422
    unsafe_url, ``details.path`` the JSON Pointer inside ``field``); the webhook client checks
    again when it calls them."""
    for path, url in verb_urls(value):
        _check_named(url, field, allow_ws=True, path=path)


def verb_url_problems(value: Any) -> list[tuple[str, str]]:
    """(JSON Pointer, the guard's message) for each URL the save would refuse: all of them."""
    problems = []
    for path, url in verb_urls(value):
        try:
            check_url_on_save(url, allow_ws=True)
        except UnsafeUrl as exc:
            problems.append((path, exc.message))
    return problems


def validate_app_json(value: Any) -> None:
    if value is not None:
        parse_verb_list(value)  # raises VerbListRejected (422 with per-verb errors)
        check_verb_urls(value)


def _validate(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> None:
    validate_urls(data)
    if "app_json" in data:
        validate_app_json(data["app_json"])
    if "call_flow_sid" in data:
        check_flow_reference(db, account_id, data["call_flow_sid"])


def _write_password(row: Application, data: dict[str, Any]) -> None:
    if "basic_auth_password" in data:
        secret = data["basic_auth_password"]
        row.basic_auth_password_encrypted = encrypt_secret(secret) if secret else None


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Application:
    _validate(db, account_id, data)
    row = Application(id=uuid.uuid4(), account_id=account_id)
    apply(row, data, PLAIN_FIELDS)
    _write_password(row, data)
    db.add(row)
    flush_or_raise(db, conflict="An application with these values already exists.")
    db.refresh(row)
    return row


def update(db: Session, account_id: uuid.UUID, app_id: uuid.UUID, data: dict[str, Any]) -> Application:
    row = get_owned(db, Application, app_id, account_id, what="application", for_update=True)
    _validate(db, account_id, data)
    apply(row, data, PLAIN_FIELDS)
    _write_password(row, data)
    flush_or_raise(db, conflict="An application with these values already exists.")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, app_id: uuid.UUID) -> Application:
    return get_owned(db, Application, app_id, account_id, what="application")


def delete(db: Session, account_id: uuid.UUID, app_id: uuid.UUID) -> None:
    row = get_owned(db, Application, app_id, account_id, what="application", for_update=True)
    in_use = db.scalar(select(func.count()).select_from(PhoneNumber).where(
        PhoneNumber.application_id == row.id, PhoneNumber.account_id == account_id))
    if in_use:
        raise Conflict(f"The application answers {in_use} phone number(s); detach them first.",
                       code="application_in_use", details={"phone_numbers": in_use})
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Application]:
    stmt = select(Application).where(Application.account_id == account_id)
    return keyset_page(db, stmt, [Application.created_at, Application.id], cursor=cursor, limit=limit)
