"""Sentiment of a transcript: per segment, per speaker, for the call, plus an emotion signal.

Only ``TextBlob(text).sentiment`` is used (the PatternAnalyzer lexicon inside the wheel):
TextBlob's other analysers and ``.words`` need NLTK corpora that are not shipped and must not
be downloaded (air-gapped). Rules (docs/media.md#sentiment):

* segment: TextBlob polarity (-1..1) and subjectivity (0..1) of its text;
* speaker and call: the mean over segments, weighted by word count (a long sentence weighs
  more than "ok");
* label: ``positive`` when polarity >= +0.1, ``negative`` when <= -0.1, else ``neutral``;
* emotion, from the caller's trajectory (the mixed ``call`` speaker for mono recordings): the
  caller's segments in time order are split into an opening and a closing half (one segment:
  both halves are that segment), ``delta = closing - opening``, then the first rule that holds:
  ``angry`` closing <= -0.5; ``frustrated`` delta <= -0.3 (ended more negative than they
  started); ``relieved`` delta >= +0.3; ``satisfied`` closing >= +0.5; else ``calm``.
  No caller speech at all: ``unknown``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from textblob import TextBlob

from app.media.transcribe import CALLER, MIXED, SpeakerSegment

LABEL_THRESHOLD = 0.1
ANGRY_CLOSING = -0.5
SATISFIED_CLOSING = 0.5
TREND_DELTA = 0.3
EMOTIONS = ("angry", "frustrated", "relieved", "satisfied", "calm", "unknown")


@dataclass(frozen=True)
class Score:
    polarity: float
    subjectivity: float
    words: int

    @property
    def label(self) -> str:
        return label_for(self.polarity)

    def to_dict(self) -> dict[str, Any]:
        return {"polarity": round(self.polarity, 4), "subjectivity": round(self.subjectivity, 4),
                "label": self.label, "words": self.words}


def label_for(polarity: float) -> str:
    if polarity >= LABEL_THRESHOLD:
        return "positive"
    if polarity <= -LABEL_THRESHOLD:
        return "negative"
    return "neutral"


def score_text(text: str) -> Score:
    result = TextBlob(text).sentiment
    return Score(float(result.polarity), float(result.subjectivity), len(text.split()))


def combine(scores: Iterable[Score]) -> Score:
    """Word-weighted mean; no words → neutral 0."""
    scores = list(scores)
    words = sum(s.words for s in scores)
    if words == 0:
        return Score(0.0, 0.0, 0)
    return Score(sum(s.polarity * s.words for s in scores) / words,
                 sum(s.subjectivity * s.words for s in scores) / words, words)


@dataclass(frozen=True)
class Emotion:
    speaker: str
    emotion: str
    opening: float | None
    closing: float | None

    @property
    def delta(self) -> float | None:
        if self.opening is None or self.closing is None:
            return None
        return self.closing - self.opening

    def to_dict(self) -> dict[str, Any]:
        rnd = (lambda v: None if v is None else round(v, 4))
        return {"speaker": self.speaker, "emotion": self.emotion, "opening": rnd(self.opening),
                "closing": rnd(self.closing), "delta": rnd(self.delta)}


def emotion_of(speaker: str, scores: Sequence[Score]) -> Emotion:
    """The rule in the module docstring, over one speaker's segment scores in time order."""
    if not scores:
        return Emotion(speaker, "unknown", None, None)
    half = max(1, len(scores) // 2)
    opening = combine(scores[:half]).polarity
    closing = combine(scores[-half:]).polarity
    delta = closing - opening
    if closing <= ANGRY_CLOSING:
        emotion = "angry"
    elif delta <= -TREND_DELTA:
        emotion = "frustrated"
    elif delta >= TREND_DELTA:
        emotion = "relieved"
    elif closing >= SATISFIED_CLOSING:
        emotion = "satisfied"
    else:
        emotion = "calm"
    return Emotion(speaker, emotion, opening, closing)


@dataclass(frozen=True)
class CallSentiment:
    segments: list[Score]          # same order as the transcript's segments
    speakers: dict[str, Score]
    call: Score
    emotion: Emotion

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call.to_dict(),
                "speakers": {k: v.to_dict() for k, v in self.speakers.items()},
                "emotion": self.emotion.to_dict(),
                "rules": {"labelThreshold": LABEL_THRESHOLD, "trendDelta": TREND_DELTA}}


def analyse(segments: Sequence[SpeakerSegment]) -> CallSentiment:
    scores = [score_text(s.text) for s in segments]
    by_speaker: dict[str, list[Score]] = {}
    for seg, score in zip(segments, scores):
        by_speaker.setdefault(seg.speaker, []).append(score)
    subject = CALLER if CALLER in by_speaker else MIXED
    return CallSentiment(
        segments=scores,
        speakers={speaker: combine(s) for speaker, s in by_speaker.items()},
        call=combine(scores),
        emotion=emotion_of(subject, by_speaker.get(subject, [])),
    )
