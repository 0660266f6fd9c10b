"""An agent's interactions: its ownership windows (``interaction_segment``), the after-call
work that ends them, and the disposition code it sets on the conversation it handled.

A window opens when the agent answers an offer (``open_segment``, its own small transaction:
the agent channel must find a live call), closes in the call record's transaction
(app/calls/records.py: talk, hold, ended_at) and gets its after-call work when the agent
leaves ``wrap_up`` (``after_call_work_over``, called by app/contact/states.py in the state
change's transaction), which can be before or after the record is written: the summary's
``acw_ms`` is always the sum of its segments', so the order does not matter.

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

import logging
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Optional

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app import limits
from app.errors import NotFound, ValidationFailed
from app.models import InteractionSegment, InteractionSummary

log = logging.getLogger(__name__)


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
    db.connection().execute(_SET_DISPOSITION, {"id": uuid.uuid4(), "account_id": account_id,
                                               "trace_id": segment.trace_id, "disposition": value})
    return Disposition(segment.trace_id, segment.call_id, value)


# Statements built once and executed with parameters: building an upsert per call (its
# ``excluded`` alias copies the table's columns and registers SQLAlchemy listeners each time)
# costs more CPU than running it and grows the event registry with every call.
def _param(table: Any, name: str) -> Any:
    return bindparam(name, type_=table.c[name].type)


def _set_disposition_statement() -> Any:
    t = InteractionSummary.__table__
    insert_ = pg_insert(t).values({k: _param(t, k) for k in ("id", "account_id", "trace_id", "disposition")})
    return insert_.on_conflict_do_update(
        index_elements=[t.c.trace_id],
        set_={"disposition": insert_.excluded.disposition, "updated_at": func.now()},
        where=t.c.account_id == insert_.excluded.account_id)


_SET_DISPOSITION = _set_disposition_statement()


# -- ownership windows --------------------------------------------------------------------------
# A window's end (FreeSWITCH's hang-up time) and the wrap-up's start (the controller's clock,
# when the bridge returned) are the same moment give or take clock skew and the hang-up's
# propagation; a window that ended earlier than this before the wrap-up belongs to an older call.
ACW_WINDOW_SLACK = timedelta(seconds=10)
def segments_acw(trace_id: uuid.UUID) -> Any:
    """SQL: the after-call work of every window of the conversation (summary ``acw_ms``)."""
    return (select(func.coalesce(func.sum(InteractionSegment.acw_ms), 0))
            .where(InteractionSegment.trace_id == trace_id).scalar_subquery())


def open_segment(account_id: uuid.UUID | str, trace_id: uuid.UUID | str, call_id: uuid.UUID | str,
                 agent_id: uuid.UUID | str, started_at: datetime) -> Optional[uuid.UUID]:
    """The agent answered: its window starts (own tenant transaction, one INSERT). Returns the
    segment id, or None when the database is away (the call goes on; the record's
    transaction writes the window then)."""
    from app.db.engine import tenant_session

    segment_id = uuid.uuid4()
    try:
        with tenant_session(account_id) as db:
            db.connection().execute(_OPEN_SEGMENT, {
                "id": segment_id, "account_id": uuid.UUID(str(account_id)), "trace_id": uuid.UUID(str(trace_id)),
                "call_id": uuid.UUID(str(call_id)), "agent_id": uuid.UUID(str(agent_id)),
                "started_at": started_at})
    except Exception:
        log.warning("agent %s: interaction segment not opened (database unavailable?)", agent_id,
                    exc_info=True)
        return None
    return segment_id


def after_call_work_over(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, acw_ms: int,
                         wrap_up_since: datetime) -> None:
    """The agent left ``wrap_up`` (begun at ``wrap_up_since``): ``acw_ms`` goes on the window
    of the call that wrap-up followed and on its conversation's summary (acw and AHT = talk +
    hold + acw). That window is the agent's latest, still without after-call work, and open or
    ended around the wrap-up's start; nothing otherwise (e.g. the wrap-up after a callback
    call, which has no window: the previous call's must not get it)."""
    segment = db.scalar(select(InteractionSegment)
                        .where(InteractionSegment.account_id == account_id,
                               InteractionSegment.agent_id == agent_id)
                        .order_by(InteractionSegment.started_at.desc()).limit(1).with_for_update())
    if segment is None or segment.acw_ms or segment.started_at > wrap_up_since:
        return
    if segment.ended_at is not None and segment.ended_at < wrap_up_since - ACW_WINDOW_SLACK:
        return
    acw_ms = max(0, acw_ms)
    segment.acw_ms = acw_ms
    segment.handle_ms = segment.talk_ms + segment.hold_ms + acw_ms
    db.flush()
    summary = InteractionSummary
    acw = segments_acw(segment.trace_id)
    db.execute(summary.__table__.update()
               .where(summary.trace_id == segment.trace_id, summary.account_id == account_id)
               .values(acw_ms=acw, aht_ms=summary.talk_ms + summary.hold_ms + acw, updated_at=func.now()))


def close_transferred_segment(account_id: uuid.UUID | str, segment_id: uuid.UUID, ended_at: datetime,
                              talk_ms: int, hold_ms: int) -> None:
    """A blind transfer ended the agent's window (its own tenant transaction): its talk and
    hold, ``transferred`` set; after-call work already measured is kept. A database fault is
    logged: the call goes on, the window stays open-ended."""
    _update_segment(account_id, segment_id, "closed after the transfer", ended_at=ended_at, talk_ms=talk_ms,
                    hold_ms=hold_ms, transferred=True, handle_ms=talk_ms + hold_ms + InteractionSegment.acw_ms)


def close_conferenced_segment(account_id: uuid.UUID | str, segment_id: uuid.UUID, ended_at: datetime,
                              talk_ms: int, hold_ms: int) -> None:
    """The agent left a three-way call (docs/agents.md "Three-way calls"): its window ends,
    ``conferenced`` set (not ``transferred``: the caller was not sent anywhere)."""
    _update_segment(account_id, segment_id, "closed after the agent left the three-way call", ended_at=ended_at,
                    talk_ms=talk_ms, hold_ms=hold_ms, conferenced=True,
                    handle_ms=talk_ms + hold_ms + InteractionSegment.acw_ms)


def mark_conferenced(account_id: uuid.UUID | str, segment_id: uuid.UUID) -> None:
    """The agent's window includes a three-way call: ``conferenced`` set (the window is closed
    as usual by the call's record, or when the agent leaves)."""
    _update_segment(account_id, segment_id, "marked conferenced", conferenced=True)


def _update_segment(account_id: uuid.UUID | str, segment_id: uuid.UUID, what: str, **values: Any) -> None:
    """One window's columns in its own tenant transaction; a database fault is logged: the
    call goes on."""
    from app.db.engine import tenant_session

    try:
        with tenant_session(account_id) as db:
            db.execute(InteractionSegment.__table__.update()
                       .where(InteractionSegment.id == segment_id,
                              InteractionSegment.account_id == uuid.UUID(str(account_id)))
                       .values(**values))
    except Exception:
        log.warning("segment %s: not %s (database unavailable?)", segment_id, what, exc_info=True)


_SEGMENT_OPEN_COLUMNS = ("id", "account_id", "trace_id", "call_id", "agent_id", "started_at")


def _open_segment_statement() -> Any:
    t = InteractionSegment.__table__
    return pg_insert(t).values({k: _param(t, k) for k in _SEGMENT_OPEN_COLUMNS})


_OPEN_SEGMENT = _open_segment_statement()
