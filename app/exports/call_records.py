"""The call-record CSV export: 18 fixed columns, interaction summary merged by ``trace_id``,
at most ``CSV_EXPORT_MAX_ROWS`` rows, streamed from a server-side cursor.

The 18 columns are SPEC's, exactly and in order, by default. ``indicators=true`` appends the
summary indicators SPEC's list leaves out (``INDICATOR_COLUMNS``, stable names) after them,
so a reader of the 18 never breaks and a data team gets every indicator in one pull.

Memory stays flat whatever the row count: rows come from PostgreSQL in batches of
``FETCH_BATCH`` (``yield_per`` → psycopg2 named cursor), are turned into CSV text and handed to
the WSGI server chunk by chunk; nothing accumulates.

Compliance: the row count of a stream is only known when it ends, so the export writes two
append-only log rows, each in its own transaction:

* ``call_records.export.started`` (row_count NULL) before the first byte is produced — so an
  export is on record even if the process dies mid-stream;
* ``call_records.export`` with the number of rows written when the stream completes, or
  ``call_records.export.incomplete`` with the rows written so far when the client disconnects
  or the stream fails midway, or ``call_records.export.failed`` (row_count 0) when the query
  itself fails before the first byte (the API then answers with its JSON error shape).

Cell formats: times ISO 8601 UTC; durations whole seconds (rounded); flags ``yes``/``no``;
empty when the interaction has no summary yet.
"""
from __future__ import annotations

import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator, Sequence

from sqlalchemy import Select, and_, select

from app import limits
from app.db.engine import tenant_session
from app.exports.compliance import log_access
from app.exports.csv_stream import iter_csv
from app.exports.filters import CallRecordFilters
from app.models import Agent, CallRecord, InteractionSummary, Queue, User

EXPORT_COLUMNS: tuple[str, ...] = (
    "Time", "Direction", "Caller", "Callee", "Agent", "Queue", "Status", "Journey", "Talk",
    "Queue Wait", "Hold Count", "Hold Time", "AHT", "Abandoned", "Disposition", "Sentiment",
    "Recording", "Call ID",
)
# appended with ``indicators=true``, in this order (docs/api.md "CSV export")
INDICATOR_COLUMNS: tuple[str, ...] = (
    "IVR", "Connect Latency", "ACW", "Transfers", "Short Abandon", "Campaign ID", "Contact ID", "AMD Result",
)
FETCH_BATCH = 1000

ACTION_STARTED = "call_records.export.started"
ACTION_COMPLETED = "call_records.export"
ACTION_INCOMPLETE = "call_records.export.incomplete"
ACTION_FAILED = "call_records.export.failed"


def export_statement(account_id: uuid.UUID, filters: CallRecordFilters, max_rows: int,
                     indicators: bool = False) -> Select[Any]:
    """Plain columns (no ORM entities): cheaper per row, and nothing is kept in an identity map.
    ``indicators``: the summary columns of INDICATOR_COLUMNS follow the 18."""
    stmt = (
        select(
            CallRecord.started_at, CallRecord.direction, CallRecord.from_number, CallRecord.to_number,
            User.username, Queue.name, CallRecord.status, CallRecord.journey, CallRecord.talk_ms,
            InteractionSummary.talk_ms, InteractionSummary.queue_wait_ms, InteractionSummary.hold_count,
            InteractionSummary.hold_ms, InteractionSummary.aht_ms, InteractionSummary.abandoned,
            InteractionSummary.disposition, CallRecord.sentiment_label, CallRecord.sentiment_score,
            CallRecord.has_recording, CallRecord.recording_url, CallRecord.call_id,
            InteractionSummary.id,
        )
        .select_from(CallRecord)
        .outerjoin(InteractionSummary, and_(InteractionSummary.trace_id == CallRecord.trace_id,
                                            InteractionSummary.account_id == CallRecord.account_id))
        .outerjoin(Agent, and_(Agent.id == CallRecord.agent_id, Agent.account_id == CallRecord.account_id))
        .outerjoin(User, and_(User.id == Agent.user_id, User.account_id == CallRecord.account_id))
        .outerjoin(Queue, and_(Queue.id == CallRecord.queue_id, Queue.account_id == CallRecord.account_id))
        .where(CallRecord.account_id == account_id)
    )
    if indicators:
        stmt = stmt.add_columns(
            InteractionSummary.ivr_ms, InteractionSummary.connect_latency_ms, InteractionSummary.acw_ms,
            InteractionSummary.transfer_count, InteractionSummary.short_abandon,
            CallRecord.campaign_id, CallRecord.contact_id, CallRecord.amd_result)
    stmt = filters.apply(stmt)
    return stmt.order_by(CallRecord.started_at.desc(), CallRecord.id.desc()).limit(max_rows)


def _seconds(ms: int | None) -> int | None:
    return None if ms is None else int(round(ms / 1000))


def _yes_no(flag: bool | None) -> str | None:
    return None if flag is None else ("yes" if flag else "no")


def _time(value: datetime) -> str:
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _sentiment(label: str | None, score: Any) -> str | None:
    """The media pipeline writes both: ``negative (-0.4125)``; either alone is shown alone."""
    if label and score is not None:
        return f"{label} ({score})"
    return label or (None if score is None else str(score))


_BASE_FIELDS = 22  # the columns export_statement always selects


def to_csv_row(row: Sequence[Any]) -> list[Any]:
    (started_at, direction, caller, callee, agent, queue, status, journey, record_talk_ms,
     summary_talk_ms, queue_wait_ms, hold_count, hold_ms, aht_ms, abandoned, disposition,
     sentiment_label, sentiment_score, has_recording, recording_url, call_id,
     summary_id) = row[:_BASE_FIELDS]
    has_summary = summary_id is not None
    sentiment = _sentiment(sentiment_label, sentiment_score)
    return [
        _time(started_at), direction, caller, callee, agent, queue, status, journey,
        _seconds(summary_talk_ms if has_summary else record_talk_ms),
        _seconds(queue_wait_ms), hold_count, _seconds(hold_ms), _seconds(aht_ms),
        _yes_no(abandoned), disposition, sentiment,
        recording_url if has_recording else None, call_id,
    ] + _indicator_cells(row[_BASE_FIELDS:])


def _indicator_cells(extra: Sequence[Any]) -> list[Any]:
    """INDICATOR_COLUMNS cells (none without ``indicators``): seconds and yes/no as above;
    Connect Latency is empty for calls no agent answered; Campaign ID and Contact ID for calls
    no campaign placed; AMD Result for calls no answering-machine detection ran on."""
    if not extra:
        return []
    (ivr_ms, connect_latency_ms, acw_ms, transfer_count, short_abandon, campaign_id, contact_id,
     amd_result) = extra
    return [_seconds(ivr_ms), _seconds(connect_latency_ms), _seconds(acw_ms), transfer_count,
            _yes_no(short_abandon), campaign_id, contact_id, amd_result]


@dataclass(frozen=True)
class ExportRequest:
    account_id: uuid.UUID
    user_id: uuid.UUID | None
    filters: CallRecordFilters
    remote_addr: str | None = None
    max_rows: int = limits.CSV_EXPORT_MAX_ROWS
    indicators: bool = False      # append INDICATOR_COLUMNS

    @property
    def columns(self) -> tuple[str, ...]:
        return EXPORT_COLUMNS + INDICATOR_COLUMNS if self.indicators else EXPORT_COLUMNS

    def log_filters(self) -> dict[str, Any]:
        logged = self.filters.to_log()
        if self.indicators:
            logged["indicators"] = "true"
        return logged


def stream_export(request: ExportRequest) -> Iterator[str]:
    """Log the start, run the query, then return the CSV chunk iterator (which logs its end).

    The query runs here, before the response starts: once the 200 and its headers are sent, a
    failure can only cut the CSV short. A query PostgreSQL refuses is logged as
    ``call_records.export.failed`` and raised, so the API answers in its JSON error shape."""
    log_access(request.account_id, request.user_id, ACTION_STARTED,
               filters=request.log_filters(), row_count=None, remote_addr=request.remote_addr)
    session = ExitStack()
    try:
        db = session.enter_context(tenant_session(request.account_id))
        stmt = export_statement(request.account_id, request.filters, request.max_rows, request.indicators)
        result = db.execute(stmt.execution_options(yield_per=FETCH_BATCH))
    except BaseException:
        session.close()
        log_access(request.account_id, request.user_id, ACTION_FAILED,
                   filters=request.log_filters(), row_count=0, remote_addr=request.remote_addr)
        raise
    return _chunks(request, session, result)


def _chunks(request: ExportRequest, session: ExitStack, result: Any) -> Iterator[str]:
    written = 0
    completed = False

    def rows() -> Iterator[list[Any]]:
        nonlocal written
        for row in result:
            yield to_csv_row(row)
            written += 1

    try:
        yield from iter_csv(request.columns, rows())
        completed = True
    finally:
        session.close()  # ends the read transaction (server-side cursor) before logging
        log_access(request.account_id, request.user_id,
                   ACTION_COMPLETED if completed else ACTION_INCOMPLETE,
                   filters=request.log_filters(), row_count=written,
                   remote_addr=request.remote_addr)
