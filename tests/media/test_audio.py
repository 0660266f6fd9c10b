"""Decoding recordings: channels, rates, and the files that must be refused."""
from __future__ import annotations

import numpy as np
import pytest

from app.media.audio import UnusableRecording, at_rate, read_recording
from tests.media.conftest import stereo_call


def test_stereo_8k_recording_reads_as_two_channels_and_resamples_to_16k(speech, write_recording):
    path = write_recording(stereo_call([(0, speech["hello"])], [(1, speech["angry"])], seconds=5))
    audio = read_recording(str(path))
    assert (len(audio.channels), audio.rate, audio.seconds) == (2, 8000, 5.0)
    wide = at_rate(audio, 16000)
    assert wide.rate == 16000 and len(wide.channels[0]) == 80000
    assert wide.channels[0].dtype == np.int16


def test_mp3_cut_short_is_truncated(speech, write_recording):
    path = write_recording(stereo_call([(0, speech["hello"])], [], seconds=6), fmt="mp3")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(UnusableRecording) as error:
        read_recording(str(path))
    assert error.value.reason == "truncated"


def test_whole_mp3_is_not_truncated(speech, write_recording):
    path = write_recording(stereo_call([(0, speech["hello"])], [], seconds=6), fmt="mp3")
    assert read_recording(str(path)).seconds == pytest.approx(6.0, abs=0.1)


@pytest.mark.parametrize("content, reason", [
    (None, "missing"), (b"", "empty"), (b"RIFF\x00\x00", "unreadable")])
def test_unusable_files_say_why(content, reason, recording_dir):
    path = recording_dir / "x.wav"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UnusableRecording) as error:
        read_recording(str(path))
    assert error.value.reason == reason
