"""/api/recordings/:id (metadata, audio with HTTP Range) and, per call record, its recordings
and transcript (recordings.view)."""
