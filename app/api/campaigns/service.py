"""Campaign rules: the caller ID is one of the account's numbers, the trunk is the account's
or a platform carrier, agent groups are the account's queues."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.api.agents.service import check_queues
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.errors import NotFound, ValidationFailed
from app.models import Campaign, CampaignContact, Carrier, PhoneNumber

FIELDS = ("name", "dialer_mode", "caller_id", "carrier_id", "agent_group_ids", "status")


def _digits(number: str) -> str:
    return number.lstrip("+")


def _validate(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
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
    if "agent_group_ids" in values:
        values["agent_group_ids"] = check_queues(db, account_id, values["agent_group_ids"] or [], "agent_group_ids")
    return values


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Campaign:
    values = _validate(db, account_id, data)
    row = Campaign(id=uuid.uuid4(), account_id=account_id)
    apply(row, values, FIELDS)
    db.add(row)
    flush_or_raise(db, conflict="A campaign with these values already exists.")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID) -> Campaign:
    return get_owned(db, Campaign, campaign_id, account_id, what="campaign")


def update(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, data: dict[str, Any]) -> Campaign:
    row = get_owned(db, Campaign, campaign_id, account_id, what="campaign", for_update=True)
    apply(row, _validate(db, account_id, data), FIELDS)
    flush_or_raise(db, conflict="A campaign with these values already exists.")
    db.refresh(row)
    return row


def delete(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID) -> None:
    row = get_owned(db, Campaign, campaign_id, account_id, what="campaign", for_update=True)
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Campaign]:
    stmt = select(Campaign).where(Campaign.account_id == account_id)
    return keyset_page(db, stmt, [Campaign.created_at, Campaign.id], cursor=cursor, limit=limit)


# --- contacts ----------------------------------------------------------------------------

def add_contacts(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID,
                 contacts: list[dict[str, Any]]) -> list[CampaignContact]:
    get(db, account_id, campaign_id)
    rows = [CampaignContact(id=uuid.uuid4(), account_id=account_id, campaign_id=campaign_id,
                            phone_number=_digits(c["phone_number"]), name=c.get("name"),
                            attributes=c.get("attributes") or {})
            for c in contacts]
    db.add_all(rows)
    flush_or_raise(db, conflict="Conflicting contacts.")
    for row in rows:
        db.refresh(row)
    return rows


def list_contacts(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, *, cursor: str | None,
                  limit: int, status: str | None) -> Page[CampaignContact]:
    get(db, account_id, campaign_id)
    stmt = select(CampaignContact).where(CampaignContact.campaign_id == campaign_id,
                                         CampaignContact.account_id == account_id)
    if status:
        stmt = stmt.where(CampaignContact.status == status)
    return keyset_page(db, stmt, [CampaignContact.created_at, CampaignContact.id], cursor=cursor, limit=limit)


def delete_contact(db: Session, account_id: uuid.UUID, campaign_id: uuid.UUID, contact_id: uuid.UUID) -> None:
    get(db, account_id, campaign_id)
    row = db.scalar(select(CampaignContact).where(CampaignContact.id == contact_id,
                                                  CampaignContact.campaign_id == campaign_id,
                                                  CampaignContact.account_id == account_id))
    if row is None:
        raise NotFound("No such contact in this campaign.", code="campaign_contact_not_found")
    db.delete(row)
    db.flush()
