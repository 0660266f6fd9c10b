"""The dialer's own moves of the state machine: a ``scheduled`` campaign whose start time came
begins (``begin``), a ``running`` campaign with no contact left to dial or in flight finishes
(``finish``). Run by every dialer instance on each sweep; the row lock (``SKIP LOCKED``) and
the state machine make two instances doing it at once harmless. Each move is announced as
``campaign.state_changed`` in its own transaction, like the API's."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.campaigns import states
from app.events.payloads import campaign_state_changed, emit
from app.models import Campaign, CampaignContact

# contact statuses that still need the dialer: to dial (now or later) or in flight
_OPEN = ("pending", "in_progress")


def advance(db: Session, now: datetime) -> list[tuple[Campaign, str]]:
    """Begin due scheduled campaigns and finish exhausted running ones (every account: the
    caller's session crosses tenants, e.g. ``platform_session``). Returns (campaign, action)
    for each move; the caller commits."""
    open_contacts = exists().where(CampaignContact.campaign_id == Campaign.id,
                                   CampaignContact.account_id == Campaign.account_id,
                                   CampaignContact.status.in_(_OPEN))
    due = db.scalars(select(Campaign).where(Campaign.status == "scheduled", Campaign.scheduled_at <= now)
                     .with_for_update(skip_locked=True)).all()
    exhausted = db.scalars(select(Campaign).where(Campaign.status == "running", ~open_contacts)
                           .with_for_update(skip_locked=True)).all()
    moves = [(c, "begin") for c in due] + [(c, "finish") for c in exhausted]
    for campaign, action in moves:
        previous = campaign.status
        campaign.status, campaign.status_changed_at = states.apply(action, previous), now
        emit("campaign.state_changed",
             campaign_state_changed(campaign.id, action=action, previous=previous, status=campaign.status,
                                    scheduled_at=campaign.scheduled_at, at=now),
             account_id=campaign.account_id, session=db)
    db.flush()
    return moves
