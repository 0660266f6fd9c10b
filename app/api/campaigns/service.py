"""Campaign rules: the caller ID is one of the account's numbers, the trunk is the account's
or a platform carrier, agent groups are the account's queues; status changes only through the
state machine (app/campaigns/states.py), and a campaign starts only with a trunk, a caller ID
and at least one agent in its agent groups."""
from __future__ import annotations

import uuid
from datetime import datetime, time, timezone
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from app.api.agents.service import check_queues
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.campaigns import amd, picking, states
from app.campaigns import contacts as contact_rules
from app.campaigns import figures as campaign_figures
from app.config import get_config
from app.contact.states import default_presence
from app.errors import Conflict, NotFound, ValidationFailed
from app.events.payloads import campaign_state_changed, emit
from app.media import moh_uploads
from app.models import AgentQueue, Campaign, CampaignContact, Carrier, PhoneNumber
from app.verbs import VerbListRejected, parse_verb_list

FIELDS = ("name", "dialer_mode", "caller_id", "carrier_id", "agent_group_ids", "window_start", "window_end",
          "allowed_weekdays", "retry_policy", "power_ratio", "abandon_cap_percent", "amd", "amd_message",
          "safe_harbour_text", "safe_harbour_url")


def _digits(number: str) -> str:
    return number.lstrip("+")


def _clock(hhmm: str) -> time:
    hours, minutes = hhmm.split(":")
    return time(int(hours), int(minutes))


def _validate(db: Session, account_id: uuid.UUID, data: dict[str, Any], row: Campaign | None = None) -> dict[str, Any]:
    values = dict(data)
    if values.get("caller_id"):
        values["caller_id"] = _digits(values["caller_id"])
        owned = db.scalar(select(PhoneNumber.id).where(PhoneNumber.account_id == account_id,
                                                      PhoneNumber.number == values["caller_id"]))
        if owned is None:
            raise ValidationFailed("The caller ID must be a phone number of this account.",
                                   code="caller_id_not_owned", details={"caller_id": ["Not a number of this account."]})
    if values.get("carrier_id"):
        usable = db.scalar(select(Carrier.id).where(Carrier.id == values["carrier_id"], or_(
            Carrier.account_id == account_id, Carrier.account_id.is_(None))))
        if usable is None:
            raise ValidationFailed("No such carrier for this account.", code="invalid_reference",
                                   details={"carrier_id": ["No such carrier."]})
    _check_safe_harbour(values, row)
    if "agent_group_ids" in values:
        values["agent_group_ids"] = check_queues(db, account_id, values["agent_group_ids"] or [], "agent_group_ids")
    for key in ("window_start", "window_end"):
        if key in values:
            values[key] = _clock(values[key])
    start = values.get("window_start", row.window_start if row else _clock("08:00"))
    end = values.get("window_end", row.window_end if row else _clock("21:00"))
    if start >= end:
        raise ValidationFailed("The calling window must open before it closes (same day, local time).",
                               details={"window_end": ["Must be later than window_start."]})
    if "allowed_weekdays" in values:
        values["allowed_weekdays"] = sorted(set(values["allowed_weekdays"]))
    _check_amd(account_id, values.get("amd", row.amd if row else "off"),
               values["amd_message"] if "amd_message" in values else row.amd_message if row else None,
               new_message="amd_message" in values)
    return values


def _check_amd(account_id: uuid.UUID, mode: str, message: dict[str, Any] | None, *, new_message: bool) -> None:
    """``message`` mode needs a message; a message is one say or play verb as in app_json (the
    verb language's own validation, so it plays exactly as that verb would), or ``{"audio":
    name}``, a file this account uploaded — checked when the message is set (``new_message``),
    and again when it plays (app/voice/amd.py), not on every later change of the campaign."""
    if message is not None and amd.MESSAGE_AUDIO in message:
        _check_audio_message(account_id, message, exists=new_message)
    elif message is not None:
        try:
            verbs = parse_verb_list([message])
        except VerbListRejected as exc:
            raise ValidationFailed("amd_message is not a valid say or play verb.", code="invalid_amd_message",
                                   details={"amd_message": exc.errors}) from exc
        if len(verbs) != 1 or verbs[0].name not in amd.MESSAGE_VERBS:
            raise ValidationFailed("amd_message must be one say or play verb.", code="invalid_amd_message",
                                   details={"amd_message": [f"verb must be one of {', '.join(amd.MESSAGE_VERBS)}."]})
    if mode == amd.MESSAGE and message is None:
        raise ValidationFailed("amd message mode leaves a message after the beep: give amd_message "
                               "(a say or play verb).", code="amd_message_required",
                               details={"amd_message": ["Required when amd is message."]})


def _check_audio_message(account_id: uuid.UUID, message: dict[str, Any], *, exists: bool) -> None:
    name = amd.audio_of(message)
    if set(message) != {amd.MESSAGE_AUDIO} or name is None:
        raise ValidationFailed("An uploaded message is {\"audio\": \"<name>\"} and nothing else.",
                               code="invalid_amd_message",
                               details={"amd_message": ["Only the key audio, a file name (string)."]})
    if not exists:
        return
    with moh_uploads.storage_errors():
        found = moh_uploads.uploaded_file(get_config().moh_dir, account_id, name)
    if found is None:
        raise ValidationFailed(f"This account has no uploaded audio called {name[:100]!r}: upload it with "
                               "PUT /api/moh/:name (GET /api/moh lists them).", code="unknown_audio",
                               details={"amd_message": [f"No uploaded audio called {name[:100]!r}."]})


def names_leaving(db: Session, account_id: uuid.UUID, audio: str) -> list[str]:
    """The account's campaigns (archived ones aside) whose answering-machine message is the
    uploaded file ``audio``: deleting it would leave their machines no message."""
    return list(db.scalars(select(Campaign.name).where(
        Campaign.account_id == account_id, Campaign.status != "archived",
        Campaign.amd_message[amd.MESSAGE_AUDIO].astext == audio).order_by(Campaign.name)))


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Campaign:
    values = dict(data)
    if values.pop("status", "draft") != "draft":
        raise ValidationFailed("A new campaign is a draft; start it with POST /api/campaigns/:id/start.",
                               details={"status": ["Only draft on create."]})
    values = _validate(db, account_id, values)
    row = Campaign(id=uuid.uuid4(), account_id=account_id)
    apply(row, values, FIELDS)
    db.add(row)
    flush_or_raise(db, conflict="A campaign with these values already exists.")
    db.refresh(row)
    return row


def _check_safe_harbour(values: dict[str, Any], row: Campaign | None) -> None:
    """The safe-harbour message is said or played, not both: one of the two set → the other
    is cleared only when the request clears it too (422 otherwise, so nothing is dropped
    silently)."""
    text = values.get("safe_harbour_text", row.safe_harbour_text if row else None)
    url = values.get("safe_harbour_url", row.safe_harbour_url if row else None)
    if text and url:
        raise ValidationFailed("The safe-harbour message is either said (text) or played (url), not both.",
                               details={"safe_harbour_url": ["Set safe_harbour_text to null to play a recording."]})


def get(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID) -> Campaign:
    return get_owned(db, Campaign, campaign_id, account_id, what="campaign")


def update(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, data: dict[str, Any]) -> Campaign:
    row = get_owned(db, Campaign, campaign_id, account_id, what="campaign", for_update=True)
    values = dict(data)
    target = values.pop("status", None)
    apply(row, _validate(db, account_id, values, row), FIELDS)
    flush_or_raise(db, conflict="A campaign with these values already exists.")
    if target is not None and target != row.status:
        _move(db, row, _action(lambda: states.action_for(row.status, target)), at=None)
    db.refresh(row)
    return row


def delete(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID) -> None:
    row = get_owned(db, Campaign, campaign_id, account_id, what="campaign", for_update=True)
    if row.status in ("running", "paused", "scheduled"):
        raise Conflict("Stop the campaign before deleting it.", code="campaign_active",
                       details={"status": row.status})
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Campaign]:
    stmt = select(Campaign).where(Campaign.account_id == account_id)
    return keyset_page(db, stmt, [Campaign.created_at, Campaign.id], cursor=cursor, limit=limit)


# --- the state machine --------------------------------------------------------------------

def _action(resolve) -> str:
    try:
        return resolve()
    except states.IllegalTransition as exc:
        raise Conflict(str(exc), code="illegal_transition",
                       details={"status": exc.current, "allowed_from": exc.allowed}) from exc


def _readiness(db: Session, row: Campaign) -> dict[str, list[str]]:
    """What a campaign lacks to place calls (field → reasons); empty when it can run."""
    missing: dict[str, list[str]] = {}
    if row.carrier_id is None:
        missing["carrier_id"] = ["A trunk is needed to dial."]
    if not row.caller_id:
        missing["caller_id"] = ["A caller ID of this account is needed to dial."]
    if not row.agent_group_ids:
        missing["agent_group_ids"] = ["At least one agent group is needed."]
    elif not db.scalar(select(func.count()).select_from(AgentQueue).where(
            AgentQueue.account_id == row.account_id, AgentQueue.queue_id.in_(row.agent_group_ids))):
        missing["agent_group_ids"] = ["The agent groups have no agents."]
    return missing


def _move(db: Session, row: Campaign, action: str, *, at: datetime | None) -> None:
    previous = row.status
    target = _action(lambda: states.apply(action, previous))
    if target in ("running", "scheduled"):
        missing = _readiness(db, row)
        if missing:
            raise ValidationFailed("The campaign cannot dial yet: " + " ".join(r for v in missing.values() for r in v),
                                   code="campaign_not_ready", details=missing)
    now = datetime.now(timezone.utc)
    row.status, row.status_changed_at = target, now
    row.scheduled_at = at if target == "scheduled" else row.scheduled_at
    db.flush()
    emit("campaign.state_changed", campaign_state_changed(row.id, action=action, previous=previous, status=target,
                                                          scheduled_at=row.scheduled_at, at=now),
         account_id=row.account_id, session=db)


def transition(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, action: str,
               *, at: datetime | None = None) -> Campaign:
    """One API action (start/pause/resume/stop/archive); ``start`` with a future ``at``
    schedules the campaign instead. Live calls are never touched: the dialer only stops
    placing new ones."""
    row = get_owned(db, Campaign, campaign_id, account_id, what="campaign", for_update=True)
    if action == "start" and at is not None and at > datetime.now(timezone.utc):
        action = "schedule"
    _move(db, row, action, at=at)
    db.refresh(row)
    return row


# --- contacts ----------------------------------------------------------------------------

def _existing_numbers(db: Session, campaign_id: uuid.UUID, account_id: uuid.UUID, wanted: list[str]) -> set[str]:
    digits = [_digits(str(n)).strip() for n in wanted]
    return set(db.scalars(select(CampaignContact.phone_number).where(
        CampaignContact.campaign_id == campaign_id, CampaignContact.account_id == account_id,
        CampaignContact.phone_number.in_(digits))))


def add_contacts(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID,
                 items: list[tuple[int, dict[str, Any]]], *, source: str) -> list[CampaignContact]:
    """All of ``items`` (row label, item) or none: one bad row refuses the import with every
    bad row named (up to 20). ``source``: "contacts" (JSON index) or "rows" (CSV line)."""
    get(db, account_id, campaign_id)
    existing = _existing_numbers(db, campaign_id, account_id, [item.get("phone_number") or "" for _, item in items])
    try:
        prepared = contact_rules.prepare(items, existing)
    except contact_rules.ContactsRejected as exc:
        raise contact_rules.rejected(exc.errors, source) from exc
    rows = [CampaignContact(id=uuid.uuid4(), account_id=account_id, campaign_id=campaign_id, **values)
            for values in prepared]
    db.add_all(rows)
    flush_or_raise(db, conflict="Conflicting contacts.")
    # one query for the server defaults (created_at), not one refresh per row
    stored = {r.id: r for r in db.scalars(select(CampaignContact).where(
        CampaignContact.id.in_([r.id for r in rows])).execution_options(populate_existing=True))}
    return _with_waiting(get(db, account_id, campaign_id), [stored[r.id] for r in rows])


def _with_waiting(campaign: Campaign, rows: list[CampaignContact]) -> list[CampaignContact]:
    """Each row with ``waiting_for`` (not a column: the calling window is judged at read time,
    as the dialer judges it; app/campaigns/picking.waiting_for)."""
    window, now = picking.window_of(campaign), datetime.now(timezone.utc)
    for row in rows:
        row.waiting_for = picking.waiting_for(row, window, now)  # type: ignore[attr-defined]
    return rows


def list_contacts(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, *, cursor: str | None,
                  limit: int, status: str | None) -> Page[CampaignContact]:
    campaign = get(db, account_id, campaign_id)
    stmt = select(CampaignContact).where(CampaignContact.campaign_id == campaign_id,
                                         CampaignContact.account_id == account_id)
    if status:
        stmt = stmt.where(CampaignContact.status == status)
    page = keyset_page(db, stmt, [CampaignContact.created_at, CampaignContact.id], cursor=cursor, limit=limit)
    _with_waiting(campaign, page.items)
    return page


def _contact(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, contact_id: uuid.UUID,
             ) -> CampaignContact:
    get(db, account_id, campaign_id)
    row = db.scalar(select(CampaignContact).where(CampaignContact.id == contact_id,
                                                  CampaignContact.campaign_id == campaign_id,
                                                  CampaignContact.account_id == account_id).with_for_update())
    if row is None:
        raise NotFound("No such contact in this campaign.", code="campaign_contact_not_found")
    return row


def delete_contact(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, contact_id: uuid.UUID) -> None:
    db.delete(_contact(db, account_id, campaign_id, contact_id))
    db.flush()


def set_disposition(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, contact_id: uuid.UUID,
                    disposition: str, note: str | None) -> CampaignContact:
    """The agent's wrap-up code for the contact (the last one wins; the time says when)."""
    row = _contact(db, account_id, campaign_id, contact_id)
    row.disposition, row.disposition_note, row.disposed_at = disposition, note, datetime.now(timezone.utc)
    db.flush()
    db.refresh(row)
    return _with_waiting(get(db, account_id, campaign_id), [row])[0]


def figures(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID) -> dict[str, Any]:
    """The live figures (app/campaigns/figures.py); 404 for another account's campaign."""
    return campaign_figures.figures(db, get(db, account_id, campaign_id), default_presence())
