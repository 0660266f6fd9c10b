"""A recording → one time-ordered transcript with a speaker per segment.

Stereo recordings (the ``record`` verb's default) carry the caller on the left channel and the
other party on the right (FreeSWITCH ``RECORD_STEREO``: read leg left, write leg right), so
each channel is transcribed on its own and the speaker is known without diarisation. The
segments of both channels are then merged by start time. A mono recording has both parties
mixed: its segments are labelled ``call``.

Each channel is first cut into utterances by voice activity detection (pocketsphinx's
``Segmenter``, WebRTC-style) and the engine is given one utterance at a time. Why: segment
times then come from the audio itself (Whisper, given a channel that starts with seconds of
silence, dates its first words to 0.0), the merge by time is right, and silence — about half
of each channel of a conversation — costs no engine time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pocketsphinx import Segmenter

from app import limits
from app.media.audio import Audio, at_rate
from app.media.engines import Engine

CALLER = "caller"
MIXED = "call"
PAD_SECONDS = 0.2  # kept around each utterance: VAD cuts word onsets and tails closely


@dataclass(frozen=True)
class SpeakerSegment:
    speaker: str
    start: float
    end: float
    text: str


def speakers_for(channels: int, *, other_party: str) -> list[str]:
    """Channel index → speaker. ``other_party``: ``agent`` when a contact-centre agent took the
    call, else ``callee``."""
    if channels == 1:
        return [MIXED]
    return [CALLER, other_party] + [f"channel{n}" for n in range(3, channels + 1)]


def speech_regions(pcm: bytes, rate: int) -> list[tuple[float, float]]:
    """(start, end) seconds of each stretch of speech in 16-bit mono ``pcm``.

    Why not ``Segmenter.segment()``: it ends the stream only when the last read is a partial
    frame, so audio whose length is a whole number of frames, cut while someone speaks (a
    call hung up mid-sentence), never closed its last region and lost it — words and all."""
    segmenter = Segmenter(sample_rate=rate)
    step = segmenter.frame_bytes
    regions = []
    for at in range(0, len(pcm), step):
        frame = pcm[at:at + step]
        last = at + step >= len(pcm)  # the last frame, whole or not, ends the stream
        speech = segmenter.end_stream(frame) if last else segmenter.process(frame)
        if speech is not None and not segmenter.in_speech:
            regions.append((segmenter.speech_start, segmenter.speech_end))
    return regions


def utterances(samples: np.ndarray, rate: int) -> list[tuple[float, np.ndarray]]:
    """(start seconds, samples) of each stretch of speech in one channel."""
    pad = int(PAD_SECONDS * rate)
    regions = []
    for start, end in speech_regions(samples.astype("<i2").tobytes(), rate):
        first = max(0, int(start * rate) - pad)
        last = min(len(samples), int(end * rate) + pad)
        if last > first:
            regions.append((first / rate, samples[first:last]))
    return regions


def transcribe_audio(audio: Audio, engine: Engine, *, other_party: str = "callee") -> list[SpeakerSegment]:
    """Resample to the engine rate, transcribe channel by channel, merge by time (ties keep
    the caller first)."""
    ready = at_rate(audio, limits.MEDIA_ENGINE_SAMPLE_RATE)
    merged: list[tuple[float, int, SpeakerSegment]] = []
    for index, (speaker, samples) in enumerate(zip(speakers_for(len(ready.channels),
                                                                 other_party=other_party),
                                                    ready.channels)):
        for offset, utterance in utterances(samples, ready.rate):
            for seg in engine.transcribe(utterance):
                start, end = round(offset + seg.start, 3), round(offset + seg.end, 3)
                merged.append((start, index, SpeakerSegment(speaker, start, end, seg.text)))
    merged.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in merged]
