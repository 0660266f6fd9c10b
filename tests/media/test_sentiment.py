"""Sentiment rules (docs/media.md#sentiment): labels, word weighting, the emotion signal."""
from __future__ import annotations

import pytest

from app.media.sentiment import Score, analyse, combine, emotion_of, label_for, score_text
from app.media.transcribe import SpeakerSegment


@pytest.mark.parametrize("polarity, label", [
    (0.1, "positive"), (0.09, "neutral"), (0.0, "neutral"), (-0.09, "neutral"), (-0.1, "negative")])
def test_label_thresholds(polarity, label):
    assert label_for(polarity) == label


def test_textblob_scores_need_no_corpora():
    assert score_text("I am very happy with the service. Thank you.").polarity == 1.0
    angry = score_text("This is terrible. I am very angry and I want a refund.")
    assert angry.polarity == pytest.approx(-0.825)


def test_speaker_score_is_weighted_by_words():
    long_bad = Score(-1.0, 1.0, 9)
    short_good = Score(1.0, 1.0, 1)
    assert combine([long_bad, short_good]).polarity == pytest.approx(-0.8)
    assert combine([]).polarity == 0.0


@pytest.mark.parametrize("trajectory, emotion", [
    ([0.2, -0.6], "angry"),
    ([0.5, 0.1], "frustrated"),
    ([-0.4, 0.0], "relieved"),
    ([0.6, 0.7], "satisfied"),
    ([0.0, 0.1], "calm"),
    ([], "unknown"),
])
def test_emotion_from_the_callers_trajectory(trajectory, emotion):
    assert emotion_of("caller", [Score(p, 0.5, 5) for p in trajectory]).emotion == emotion


def test_call_analysis_scores_each_speaker_and_reads_the_emotion_from_the_caller():
    segments = [SpeakerSegment("caller", 0, 2, "I am very happy with the service"),
                SpeakerSegment("agent", 2, 4, "This is terrible"),
                SpeakerSegment("caller", 4, 6, "This is terrible, I am very angry")]
    result = analyse(segments)
    assert set(result.speakers) == {"caller", "agent"}
    assert result.emotion.speaker == "caller" and result.emotion.emotion == "angry"
    assert result.speakers["agent"].label == "negative"
    assert len(result.segments) == 3
