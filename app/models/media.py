"""Recordings and their transcripts (the media pipeline's state, docs/data-model.md).

Both are written by the media workers on the platform path and read by tenants through the
API under row-level security. A recording's ``id`` is derived from its account and file path
(``app.media.recordings.recording_id``), so a redelivered ``media.recording.completed`` finds
the row it already wrote instead of creating a second one.
"""
from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, in_list
from app.models.enums import RECORDING_FORMATS, RECORDING_STATUSES, SENTIMENT_LABELS


class Recording(TenantOwned, Base):
    """One audio file of a call (record verb, dial/conference ``record: true``).

    ``status``: recorded (row written, transcription queued) → transcribing → transcribed, or
    failed (``failure_reason``). ``*_notified_at``: when the statusHook got the "recording
    ready" / "transcript ready" POST, so a redelivered job sends only what is still missing."""

    __tablename__ = "recordings"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    call_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    trace_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    format: Mapped[str] = mapped_column(String(8), nullable=False)
    stereo: Mapped[bool] = mapped_column(Boolean, nullable=False)
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    completion_cause: Mapped[str | None] = mapped_column(String(64))
    status_hook: Mapped[str | None] = mapped_column(Text)
    ready_notified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    transcript_notified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_recordings_id_account"),
        CheckConstraint(in_list("format", RECORDING_FORMATS), name="format_known"),
        CheckConstraint(in_list("status", RECORDING_STATUSES), name="status_known"),
        CheckConstraint("duration_ms IS NULL OR duration_ms >= 0", name="duration_non_negative"),
        Index("ix_recordings_account_call", "account_id", "call_id"),
    )


class Transcript(TenantOwned, Base):
    """The merged, time-ordered transcript of one recording, with its sentiment.

    ``segments``: [{speaker, start, end, text, polarity, subjectivity}] ordered by ``start``
    (seconds from the start of the recording). ``sentiment``: per speaker and for the call,
    with the label and the emotion signal (``app.media.sentiment``)."""

    __tablename__ = "transcripts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    recording_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, unique=True)
    call_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    trace_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    engine: Mapped[str] = mapped_column(String(32), nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    segments: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, nullable=False)
    sentiment: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    sentiment_score: Mapped[Decimal | None] = mapped_column(Numeric(5, 4))
    sentiment_label: Mapped[str | None] = mapped_column(String(32))
    audio_seconds: Mapped[Decimal] = mapped_column(Numeric(10, 3), nullable=False)
    processing_ms: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )

    __table_args__ = (
        # a transcript can only belong to a recording of the same account
        ForeignKeyConstraint(
            ["recording_id", "account_id"], ["recordings.id", "recordings.account_id"],
            name="fk_transcripts_recording_same_account", ondelete="CASCADE",
        ),
        CheckConstraint("sentiment_label IS NULL OR " + in_list("sentiment_label", SENTIMENT_LABELS),
                        name="sentiment_label_known"),
        CheckConstraint("sentiment_score IS NULL OR sentiment_score BETWEEN -1 AND 1",
                        name="sentiment_range"),
        Index("ix_transcripts_account_call", "account_id", "call_id"),
    )
