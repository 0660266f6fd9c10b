"""The whole reply is accepted or rejected together (SPEC "Verbs", "Errors")."""
from __future__ import annotations

import pytest

from app import limits
from app.verbs import REGISTRY, VerbListRejected, parse_verb_list
from app.verbs.dial import Dial
from app.verbs.gather import Gather
from app.verbs.queue import Queue
from tests.verbs.fixtures import bad_fixtures, good_fixtures, load


@pytest.mark.parametrize("path", good_fixtures(), ids=lambda p: p.stem)
def test_given_good_fixture_when_parsed_then_every_item_becomes_its_verb(path):
    data = load(path)
    verbs = parse_verb_list(data)
    kept = len(verbs) + len(verbs.warnings)
    assert kept == len(data)
    assert [v.name for v in verbs] == [item["verb"] for item in data[: len(verbs)]]


@pytest.mark.parametrize("path", bad_fixtures(), ids=lambda p: p.stem)
def test_given_bad_fixture_when_parsed_then_rejected_with_exactly_the_expected_errors(path):
    case = load(path)
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list(case["reply"])
    got = sorted(((e["index"] if e["index"] is not None else -1), e["field"] or "") for e in caught.value.errors)
    want = sorted(((e["index"] if e["index"] is not None else -1), e["field"] or "") for e in case["errors"])
    assert got == want
    assert all(e["message"] for e in caught.value.errors)


def test_given_registry_when_listed_then_it_has_exactly_the_twelve_spec_verbs():
    assert set(REGISTRY) == {"say", "play", "gather", "dial", "queue", "conference", "record",
                             "listen", "pause", "hangup", "redirect", "tag"}
    assert all(cls.name == name for name, cls in REGISTRY.items())


def test_given_one_unknown_verb_when_parsed_then_nothing_is_returned_and_valid_items_do_not_matter():
    data = [{"verb": "say", "text": "ok"}] * 5 + [{"verb": "Say", "text": "case matters"}]
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list(data)
    assert [(e["index"], e["verb"], e["field"]) for e in caught.value.errors] == [(5, "Say", "verb")]


def test_given_rejection_when_serialized_then_api_shape_has_code_and_details():
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list([])
    body = caught.value.to_dict()
    assert body["code"] == "verb_list_rejected"
    assert caught.value.status == 422
    assert body["details"][0]["message"].startswith("Empty array")


def test_given_too_many_verbs_when_parsed_then_rejected_before_items_are_read():
    data = [{"verb": "pause"}] * (limits.VERB_LIST_MAX_VERBS + 1)
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list(data)
    assert caught.value.errors[0]["index"] is None


@pytest.mark.parametrize("ender", ["dial", "queue", "conference", "record", "listen"])
def test_given_list_continuing_after_handover_verb_when_parsed_then_rest_dropped_with_warnings(ender):
    item = {
        "dial": {"verb": "dial", "target": [{"type": "user", "name": "a"}]},
        "queue": {"verb": "queue", "name": "q"},
        "conference": {"verb": "conference", "name": "room"},
        "record": {"verb": "record"},
        "listen": {"verb": "listen", "url": "wss://s.example.com/a"},
    }[ender]
    verbs = parse_verb_list([{"verb": "say", "text": "hi"}, item, {"verb": "pause"}, {"verb": "hangup"}])
    assert [v.name for v in verbs] == ["say", ender]
    assert [(w["index"], w["verb"]) for w in verbs.warnings] == [(2, "pause"), (3, "hangup")]


def test_given_invalid_item_after_handover_verb_when_parsed_then_whole_list_still_rejected():
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list([{"verb": "record"}, {"verb": "nope"}])
    assert caught.value.errors[0]["index"] == 1


def test_given_omitted_fields_when_parsed_then_spec_defaults_apply():
    (gather,) = parse_verb_list([{"verb": "gather"}])
    assert isinstance(gather, Gather)
    assert gather.params["input"] == ["dtmf"]
    assert gather.params["timeout"] == 5 and gather.params["finishOnKey"] == "#"
    (dial,) = parse_verb_list([{"verb": "dial", "target": [{"type": "user", "name": "a"}]}])
    assert isinstance(dial, Dial) and dial.params["timeout"] == 60 and dial.params["record"] is False
    (queue,) = parse_verb_list([{"verb": "queue", "name": "q"}])
    assert isinstance(queue, Queue)
    assert (queue.params["moh"], queue.params["timeout"], queue.params["announcePosition"],
            queue.params["announceInterval"]) == ("default", 300, True, 30)
    (listen,) = parse_verb_list([{"verb": "listen", "url": "wss://s.example.com/a"}])
    assert (listen.params["mixType"], listen.params["sampleRate"]) == ("mixed", 16000)
    (record,) = parse_verb_list([{"verb": "record"}])
    assert (record.params["format"], record.params["stereo"]) == ("mp3", True)
    say, pause = parse_verb_list([{"verb": "say", "text": "x"}, {"verb": "pause"}])
    assert say.params["loop"] == 1 and pause.params["length"] == 1
    (conf,) = parse_verb_list([{"verb": "conference", "name": "r"}])
    assert (conf.params["muted"], conf.params["startOnEnter"], conf.params["endOnExit"],
            conf.params["record"], conf.params.get("maxParticipants")) == (False, True, False, False, None)


def test_given_tag_data_too_large_when_parsed_then_rejected_by_serialized_size():
    data = {f"k{i}": "x" * 200 for i in range(30)}
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list([{"verb": "tag", "data": data}])
    assert caught.value.errors[0]["field"] == "data"


def test_given_loopback_http_hook_when_loopback_allowed_then_accepted_else_rejected(monkeypatch):
    from app.settings import get_settings

    item = [{"verb": "redirect", "url": "http://127.0.0.1:8080/next"}]
    monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "1")
    get_settings.cache_clear()
    try:
        assert parse_verb_list(item)[0].params["url"] == "http://127.0.0.1:8080/next"
        monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "0")
        get_settings.cache_clear()
        with pytest.raises(VerbListRejected):
            parse_verb_list(item)
    finally:
        monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "1")
        get_settings.cache_clear()
