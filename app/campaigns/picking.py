"""Contacts at dial time: which ones the dialer may call now, and what an attempt's outcome
does to them. The rules that must hold *when the call is placed*, not when the list was
imported, are checked here: the campaign is running, the number is not on the account's
do-not-call list (which may have grown since), and the calling window is open in the contact's
zones at ``now`` (the clock is a parameter, so tests and the benchmark inject it).

Safe across several dialer instances: rows are taken with ``FOR UPDATE SKIP LOCKED`` and leave
``pending`` in the same transaction (``in_progress``), so a contact is never dialled twice at
once — a second picker skips the locked rows and, after the commit, no longer sees them.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Optional

from sqlalchemy import or_, select, text, update
from sqlalchemy.orm import Session

from app.campaigns import numbers, retries
from app.campaigns.amd import result_of as amd_verdict
from app.campaigns.window import CallingWindow
from app.events.payloads import campaign_attempt, emit
from app.models import CallRecord, Campaign, CampaignContact, DoNotCall

# batches looked at per pick: a batch's rows may all be outside their window or listed
SCAN_ROUNDS = 4
# a contact whose window opens nowhere in the next days is looked at again this much later
WINDOW_RECHECK = timedelta(days=1)
# what a pending contact waits for (``waiting_for``)
WAITING_WINDOW, WAITING_RETRY = "calling_window", "retry"


@dataclass(frozen=True)
class Picked:
    contact_id: uuid.UUID
    phone_number: str
    attempt: int


def window_of(campaign: Campaign) -> CallingWindow:
    return CallingWindow(campaign.window_start, campaign.window_end, frozenset(campaign.allowed_weekdays))


def zones_of(contact: CampaignContact) -> tuple[str, ...]:
    """Stored zones; rows imported before zones were stored derive them from the number."""
    if contact.time_zones:
        return tuple(contact.time_zones)
    try:
        return numbers.parse(contact.phone_number).time_zones
    except numbers.InvalidContactNumber:
        return ()


def waiting_for(contact: CampaignContact, window: CallingWindow, now: datetime) -> Optional[str]:
    """Why a ``pending`` contact is not dialled at ``now`` (the API's ``waiting_for``), judged as
    the picker would: ``calling_window`` when the window is closed now in its zones (the picker
    put it off, or will, to the window's next opening), ``retry`` when its ``next_attempt_at``
    (a retry rule's delay) is still to come; None when it is due (dialled as lines free up) or
    not pending (its ``status`` says why: ``do_not_call``, ``completed``, …)."""
    if contact.status != "pending":
        return None
    if not window.allows(now, zones_of(contact)):
        return WAITING_WINDOW
    if contact.next_attempt_at is not None and contact.next_attempt_at > now:
        return WAITING_RETRY
    return None


def running_campaign(db: Session, campaign_id: uuid.UUID) -> Optional[Campaign]:
    """The campaign when it is running (a dialling round's start), else None."""
    campaign = db.get(Campaign, campaign_id)
    return campaign if campaign is not None and campaign.status == "running" else None


def pick(db: Session, campaign: Campaign, now: datetime, limit: int) -> list[Picked]:
    """Take up to ``limit`` contacts to dial now (marked ``in_progress``, attempt counted).
    Listed numbers become ``do_not_call`` and are never dialled; contacts outside their window
    are put off to its next opening. The caller commits.

    Rows are locked ``limit`` at a time and every locked row is changed (taken, listed or put
    off), so a picker never holds rows it does not use and a second picker is never starved."""
    if campaign.status != "running" or limit <= 0:
        return []
    window = window_of(campaign)
    picked: list[Picked] = []
    for _ in range(SCAN_ROUNDS):
        wanted = limit - len(picked)
        candidates = db.scalars(
            select(CampaignContact)
            .where(CampaignContact.campaign_id == campaign.id, CampaignContact.account_id == campaign.account_id,
                   CampaignContact.status == "pending",
                   or_(CampaignContact.next_attempt_at.is_(None), CampaignContact.next_attempt_at <= now))
            .order_by(CampaignContact.next_attempt_at.asc().nulls_first(), CampaignContact.created_at,
                      CampaignContact.id)
            .limit(wanted)
            .with_for_update(skip_locked=True)
        ).all()
        listed = set(db.scalars(select(DoNotCall.number).where(
            DoNotCall.account_id == campaign.account_id,
            DoNotCall.number.in_([c.phone_number for c in candidates])))) if candidates else set()
        for contact in candidates:
            if contact.phone_number in listed:
                contact.status = "do_not_call"
                continue
            zones = zones_of(contact)
            if not window.allows(now, zones):
                contact.next_attempt_at = window.next_opening(now, zones) or now + WINDOW_RECHECK
                continue
            contact.status = "in_progress"
            contact.attempts += 1
            contact.last_attempt_at = now
            picked.append(Picked(contact.id, contact.phone_number, contact.attempts))
        db.flush()
        if len(candidates) < wanted or len(picked) == limit:
            break
    return picked


def record_outcome(db: Session, campaign: Campaign, contact_id: uuid.UUID, outcome: str, now: datetime,
                   *, amd: Optional[dict[str, Any]] = None, call_id: uuid.UUID | None = None) -> str:
    """Apply one attempt's ``outcome`` to the contact per the campaign's retry rules and queue
    ``campaign.attempt`` (with the call's answering-machine detection report ``amd``, if one
    ran) in the same transaction; returns the contact's new status. With ``call_id``, the
    attempt's call record is stamped with the campaign and the contact (the record is written
    with its ``call.ended``, so it exists when the outcome is applied; the controller that
    wrote it need not know about campaigns) and the detection's verdict, also kept as the
    contact's ``last_amd_result`` (app/campaigns/amd.result_of). The caller commits."""
    contact = db.scalar(select(CampaignContact).where(
        CampaignContact.id == contact_id, CampaignContact.campaign_id == campaign.id,
        CampaignContact.account_id == campaign.account_id).with_for_update())
    if contact is None:
        raise LookupError(f"no contact {contact_id} in campaign {campaign.id}")
    decision = retries.decide(campaign.retry_policy, outcome, contact.attempts, now)
    contact.status, contact.next_attempt_at, contact.last_result = decision.status, decision.next_attempt_at, outcome
    contact.last_amd_result = verdict = amd_verdict(amd)
    db.flush()
    count(db, campaign.id, campaign.account_id, outcome)
    if call_id is not None:
        db.execute(update(CallRecord).where(CallRecord.account_id == campaign.account_id,
                                            CallRecord.call_id == call_id)
                   .values(campaign_id=campaign.id, contact_id=contact.id, amd_result=verdict))
    emit("campaign.attempt", campaign_attempt(campaign.id, contact.id, attempt=contact.attempts, outcome=outcome,
                                              contact_status=decision.status,
                                              next_attempt_at=decision.next_attempt_at, at=now, amd=amd,
                                              call_id=call_id),
         account_id=campaign.account_id, session=db)
    return decision.status


def count(db: Session, campaign_id: uuid.UUID, account_id: uuid.UUID, key: str) -> None:
    """One more ``key`` (an attempt outcome, or ``skipped``) in the campaign's
    ``outcome_counts``, in the caller's transaction: the live figures count each applied outcome
    exactly once, and survive any restart (a Redis counter would not)."""
    db.execute(text("UPDATE campaigns SET outcome_counts = outcome_counts"
                    " || jsonb_build_object(CAST(:key AS text), COALESCE((outcome_counts ->> :key)::int, 0) + 1)"
                    " WHERE id = :campaign AND account_id = :account"),
               {"key": key, "campaign": campaign_id, "account": account_id})
