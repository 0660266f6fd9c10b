"""Recording and transcript bodies (field names as in the call-record resource)."""
from __future__ import annotations

import marshmallow as ma


class RecordingSchema(ma.Schema):
    id = ma.fields.UUID()
    call_id = ma.fields.UUID()
    trace_id = ma.fields.UUID(allow_none=True)
    format = ma.fields.String(metadata={"description": "mp3 or wav"})
    stereo = ma.fields.Boolean(metadata={"description": "caller left, other party right"})
    duration_ms = ma.fields.Integer(allow_none=True)
    size_bytes = ma.fields.Integer(allow_none=True)
    status = ma.fields.String(metadata={"description": "recorded, transcribing, transcribed or failed"})
    failure_reason = ma.fields.String(allow_none=True)
    created_at = ma.fields.AwareDateTime()
    audio_url = ma.fields.String()


class RecordingListSchema(ma.Schema):
    items = ma.fields.List(ma.fields.Nested(RecordingSchema))


class TranscriptSegmentSchema(ma.Schema):
    speaker = ma.fields.String(metadata={"description": "caller, callee, agent, or call (mono)"})
    start = ma.fields.Float(metadata={"description": "seconds from the start of the recording"})
    end = ma.fields.Float()
    text = ma.fields.String()
    polarity = ma.fields.Float()
    subjectivity = ma.fields.Float()


class TranscriptSchema(ma.Schema):
    id = ma.fields.UUID()
    recording_id = ma.fields.UUID()
    call_id = ma.fields.UUID()
    engine = ma.fields.String()
    text = ma.fields.String()
    segments = ma.fields.List(ma.fields.Nested(TranscriptSegmentSchema))
    sentiment = ma.fields.Dict(metadata={"description": "call, speakers, emotion (docs/media.md)"})
    sentiment_score = ma.fields.Float(allow_none=True)
    sentiment_label = ma.fields.String(allow_none=True)
    audio_seconds = ma.fields.Float()
    created_at = ma.fields.AwareDateTime()


class PeaksSchema(ma.Schema):
    recording_id = ma.fields.UUID()
    peaks = ma.fields.List(ma.fields.Float(), metadata={
        "description": "RECORDING_PEAKS (200) equal slices of the recording in order, each its loudest sample "
                       "over all channels as a fraction of full scale: 0.0 silence, 1.0 full scale"})
    duration_seconds = ma.fields.Float(metadata={"description": "the file's length, which the peaks span"})


class MediaTicketSchema(ma.Schema):
    ticket = ma.fields.String(metadata={"description": "Opens this recording's stream only, until it expires"})
    expires_in_seconds = ma.fields.Integer(metadata={"description": "Refused after this long"})
    stream_url = ma.fields.String(metadata={"description": "The audio's path with the ticket: an <audio src>"})


class MediaStreamQuerySchema(ma.Schema):
    ticket = ma.fields.String(required=True)
