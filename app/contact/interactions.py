"""An agent's interactions: the disposition code it sets on the conversation it handled.

The agent channel's ``disposition`` command (docs/agents.md) and any REST twin call
``set_disposition``. The interaction is found through the agent's own ``interaction_segment``
rows (written when the agent answers, so a live call is found too): by the caller's call id
(the offer's ``offerId``), by trace id, or, with neither, the agent's latest one. An agent can
only disposition a conversation it owned a window of; anything else is "not found" (no hint
that another agent's or tenant's call exists). The code lands on ``interaction_summary``
(one row per trace): upserted here, so a disposition set while the call is live survives the
hang-up's upsert (which keeps an existing disposition when the session has none).
"""
from __future__ import annotations

import unicodedata
import uuid
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app import limits
from app.errors import NotFound, ValidationFailed
from app.models import InteractionSegment, InteractionSummary


class InvalidDisposition(ValidationFailed):
    """The code is not 1-64 characters of text without control characters."""
    code = "invalid_disposition"


class InteractionNotFound(NotFound):
    """No interaction of this agent matches (or it belongs to another agent or tenant)."""
    code = "interaction_not_found"


@dataclass(frozen=True)
class Disposition:
    trace_id: uuid.UUID
    call_id: Optional[uuid.UUID]
    code: str


def validate_code(code: object) -> str:
    """The code as stored; raises InvalidDisposition."""
    if not isinstance(code, str):
        raise InvalidDisposition("The disposition code must be a string.")
    if not limits.DISPOSITION_MIN_LENGTH <= len(code) <= limits.DISPOSITION_MAX_LENGTH:
        raise InvalidDisposition(
            f"The disposition code must be {limits.DISPOSITION_MIN_LENGTH}-"
            f"{limits.DISPOSITION_MAX_LENGTH} characters.")
    if code.strip() != code or any(unicodedata.category(ch).startswith("C") for ch in code):
        raise InvalidDisposition(
            "The disposition code must not contain control characters or surrounding spaces.")
    return code


def _segment(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID,
             call_id: Optional[uuid.UUID], trace_id: Optional[uuid.UUID]) -> Optional[InteractionSegment]:
    query = select(InteractionSegment).where(InteractionSegment.account_id == account_id,
                                             InteractionSegment.agent_id == agent_id)
    if call_id is not None:
        query = query.where(InteractionSegment.call_id == call_id)
    if trace_id is not None:
        query = query.where(InteractionSegment.trace_id == trace_id)
    return db.scalar(query.order_by(InteractionSegment.started_at.desc()).limit(1))


def set_disposition(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, code: object, *,
                    call_id: Optional[uuid.UUID] = None,
                    trace_id: Optional[uuid.UUID] = None) -> Disposition:
    """Set ``code`` on the agent's interaction: the one of ``call_id`` / ``trace_id`` when
    given (both: they must agree), else the agent's current or last one. A second call
    replaces the code. Runs in the caller's tenant transaction (``tenant_session``)."""
    value = validate_code(code)
    segment = _segment(db, account_id, agent_id, call_id, trace_id)
    if segment is None:
        raise InteractionNotFound("No interaction of this agent matches.")
    stmt = pg_insert(InteractionSummary).values(
        id=uuid.uuid4(), account_id=account_id, trace_id=segment.trace_id, disposition=value)
    db.execute(stmt.on_conflict_do_update(
        index_elements=[InteractionSummary.trace_id],
        set_={"disposition": stmt.excluded.disposition, "updated_at": func.now()},
        where=InteractionSummary.account_id == account_id))
    return Disposition(segment.trace_id, segment.call_id, value)
