"""The media pipeline: recording row → offline transcription → sentiment (docs/media.md).

Runs in ``sbc workers``' media worker processes (``app.media.worker``); the API reads what it
wrote (``app.api.recordings``)."""
