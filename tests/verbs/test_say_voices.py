"""say/gather voices users already write are spoken, not refused: man/male, woman/female map to
a flite voice of that kind, unknown names fall back to the application's default voice with a
warning in the call's journey, and a non-English language is spoken and noted."""
from __future__ import annotations

import pytest

from app.verbs import parse_verb_list
from tests.simulator import Call
from tests.verbs.conftest import AppDefaults


def _spoken(run) -> list[str]:
    return [arg for app, arg in run.apps() if app == "speak"]


@pytest.mark.parametrize("asked, used", [("man", "kal"), ("Male", "kal"), ("woman", "slt"), ("female", "slt"),
                                         ("awb", "awb")])
def test_given_a_generic_or_flite_voice_when_saying_then_that_kind_of_voice_speaks_without_warning(
        run_on_call, asked, used):
    run = run_on_call(Call(), [{"verb": "say", "text": "Hi", "voice": asked}])
    assert run.error is None
    assert _spoken(run) == [f"flite|{used}|Hi"]
    assert not [j for j in run.ctx.journey if j.startswith("warning:")]


def test_given_an_unknown_voice_when_saying_then_the_application_voice_speaks_and_the_journey_warns(run_on_call):
    run = run_on_call(Call(), [{"verb": "say", "text": "Hi", "voice": "Polly.Joanna"}],
                      application=AppDefaults(voice="rms"))
    assert run.error is None
    assert _spoken(run) == ["flite|rms|Hi"]
    assert "warning:voice Polly.Joanna->rms" in run.ctx.journey


def test_given_a_non_english_language_when_saying_then_it_is_spoken_and_noted(run_on_call):
    run = run_on_call(Call(), [{"verb": "say", "text": "Guten Tag", "language": "de-DE", "voice": "woman"}])
    assert run.error is None
    assert _spoken(run) == ["flite|slt|Guten Tag"]
    assert "note:language de-DE->slt" in run.ctx.journey
    english = run_on_call(Call(), [{"verb": "say", "text": "Hi", "language": "en-GB"}])
    assert not [j for j in english.ctx.journey if j.startswith("note:")]


def test_given_a_gather_prompt_with_a_generic_voice_when_gathering_then_tts_voice_is_the_flite_one(run_on_call):
    run = run_on_call(Call().press("1"), [{"verb": "gather", "numDigits": 1,
                                           "say": {"text": "Press 1", "voice": "female"}}])
    assert ("tts_voice", "slt") in run.setvars()


def test_given_a_voice_from_another_platform_when_validating_the_reply_then_it_is_accepted():
    verbs = parse_verb_list([{"verb": "say", "text": "Hi", "voice": "Polly.Joanna"}])
    assert [v.name for v in verbs] == ["say"]
