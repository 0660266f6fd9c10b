"""Reading call records: newest first, keyset on (started_at, public_id)."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from app.api.pagination import Page, keyset_page
from app.errors import NotFound
from app.exports.filters import CallRecordFilters
from app.models import Agent, CallRecord, InteractionSegment, InteractionSummary, Queue, User


def _agent_names(db: Session, account_id: uuid.UUID, agent_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The agents' usernames by id (a deleted agent is absent)."""
    if not agent_ids:
        return {}
    return dict(db.execute(
        select(Agent.id, User.username).join(User, and_(User.id == Agent.user_id, User.account_id == Agent.account_id))
        .where(Agent.account_id == account_id, Agent.id.in_(agent_ids))).all())


def _with_names(db: Session, account_id: uuid.UUID, records: list[CallRecord]) -> list[dict[str, Any]]:
    """The records as bodies with ``agent_name`` (the agent's username) and ``queue_name``, as
    the CSV export names them. Looked up for the page's distinct ids in two small queries, not
    joined into the page's query, so the keyset scan stays on call_records alone; a deleted
    agent or queue is null."""
    agents = _agent_names(db, account_id, {r.agent_id for r in records if r.agent_id})
    queue_ids = {r.queue_id for r in records if r.queue_id}
    queues = dict(db.execute(select(Queue.id, Queue.name).where(
        Queue.account_id == account_id, Queue.id.in_(queue_ids))).all()) if queue_ids else {}
    columns = CallRecord.__table__.c.keys()
    return [{**{name: getattr(r, name) for name in columns},
             "agent_name": agents.get(r.agent_id), "queue_name": queues.get(r.queue_id)} for r in records]


def list_page(db: Session, account_id: uuid.UUID, filters: CallRecordFilters, *,
              cursor: str | None, limit: int) -> Page[dict[str, Any]]:
    stmt = filters.apply(select(CallRecord).where(CallRecord.account_id == account_id))
    page = keyset_page(db, stmt, [CallRecord.started_at, CallRecord.public_id],
                       cursor=cursor, limit=limit, descending=True)
    return Page(items=_with_names(db, account_id, page.items), next_cursor=page.next_cursor)


def detail(db: Session, account_id: uuid.UUID, public_id: uuid.UUID) -> dict[str, Any]:
    """The record with its interaction summary and the agents' windows of its conversation
    (each with its ``agent_name``); another tenant's id is a plain 404."""
    record = db.scalar(select(CallRecord).where(CallRecord.public_id == public_id,
                                                CallRecord.account_id == account_id))
    if record is None:
        raise NotFound("No such call record.", code="call_record_not_found")
    summary = db.scalar(select(InteractionSummary).where(InteractionSummary.trace_id == record.trace_id,
                                                         InteractionSummary.account_id == account_id))
    segments = db.scalars(select(InteractionSegment).where(InteractionSegment.trace_id == record.trace_id,
                                                          InteractionSegment.account_id == account_id)
                          .order_by(InteractionSegment.started_at)).all()
    (body,) = _with_names(db, account_id, [record])
    body["summary"] = summary
    names = _agent_names(db, account_id, {g.agent_id for g in segments if g.agent_id})
    columns = InteractionSegment.__table__.c.keys()
    body["segments"] = [{**{name: getattr(g, name) for name in columns}, "agent_name": names.get(g.agent_id)}
                        for g in segments]
    return body
