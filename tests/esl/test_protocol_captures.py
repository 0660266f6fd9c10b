"""esl/protocol.py against every real FreeSWITCH capture, byte for byte."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esl.protocol import Event, FrameParser, encode_command, encode_event_plain, iter_frames, parse_event_plain
from tests.esl.capture_replay import CAPTURES, all_captures, read_transcript


def _raw(name: str) -> bytes:
    return (CAPTURES / name / "received.raw").read_bytes()


@pytest.mark.parametrize("name", all_captures())
def test_given_capture_when_parsed_whole_then_every_byte_belongs_to_a_frame(name):
    raw = _raw(name)
    frames = list(iter_frames(raw))  # raises on trailing bytes / bad framing
    events = [f for f in frames if f.content_type == "text/event-plain"]
    # independent count: outer "Content-Type: text/event-plain" lines (inner events never carry one)
    assert len(events) == len(re.findall(rb"(?m)^Content-Type: text/event-plain$", raw))
    for frame in events:
        event = frame.event()
        assert event.name, "every event has Event-Name"
        assert event.get("Event-Sequence", "").isdigit()
    replies = [f for f in frames if f.content_type in ("command/reply", "api/response")]
    sent = [c for c in read_transcript(name) if c.sent]
    assert len(replies) == len(sent), "one reply per command sent"


@pytest.mark.parametrize("name", all_captures())
def test_given_capture_when_fed_in_the_recorded_recv_chunks_then_frames_equal_whole_parse(name):
    parser = FrameParser()
    chunked = []
    for chunk in read_transcript(name):
        if not chunk.sent:
            chunked.extend(parser.feed(chunk.data))
    whole = list(iter_frames(_raw(name)))
    assert [(f.headers.headers, f.body) for f in chunked] == [(f.headers.headers, f.body) for f in whole]
    assert parser.buffered == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=200))
def test_given_arbitrary_split_points_when_feeding_then_frames_are_identical(sizes):
    raw = _raw("outbound_conference")
    parser = FrameParser()
    frames, pos, i = [], 0, 0
    while pos < len(raw):
        n = sizes[i % len(sizes)]
        frames.extend(parser.feed(raw[pos:pos + n]))
        pos += n
        i += 1
    assert len(frames) == len(list(iter_frames(raw)))


def test_given_connect_reply_without_content_length_then_channel_data_is_one_decoded_block():
    frame = list(iter_frames(_raw("outbound_answer_playback_hangup")))[0]
    data = frame.event()
    assert frame.content_type == "command/reply"
    assert frame.body == b""
    assert data.get("Event-Name") == "CHANNEL_DATA"
    assert data.get("Reply-Text") == "+OK\n"
    assert data.get("Socket-Mode") == "async"
    assert data.get("Control") == "full"
    assert data.get("Unique-ID") == "8f763837-3002-4d1c-b9d2-4967b1a114dc"
    assert data.variable("sip_from_uri") == "sipp@127.0.0.1:5070"
    # the SDP keeps its CRLFs inside one value instead of becoming fake header lines
    assert data.variable("switch_r_sdp").startswith("v=0\r\no=user1")


def test_given_conference_floor_change_then_repeated_headers_are_all_kept_in_order():
    events = [f.event() for f in iter_frames(_raw("outbound_conference")) if f.content_type == "text/event-plain"]
    floor = next(e for e in events if e.get("Action") == "floor-change")
    assert floor.headers[0] == ("Event-Subclass", "conference::maintenance")
    assert floor.headers[1] == ("Event-Name", "CUSTOM")
    assert floor.dispatch_key == "conference::maintenance"
    assert floor.get_all("Conference-Name") == ["room1", "room1"]
    assert floor.get("Old-ID") == "none" and floor.get("New-ID") == "1"


def test_given_background_job_then_inner_body_is_framed_by_inner_content_length():
    events = [f.event() for f in iter_frames(_raw("inbound_originate_bgapi")) if f.content_type == "text/event-plain"]
    jobs = [e for e in events if e.name == "BACKGROUND_JOB"]
    assert jobs[0].body == "+OK 175db7f9-ee6d-40db-889b-4de26195cd3a\n"
    assert jobs[0].get("Job-Command-Arg").startswith("{origination_uuid=175db7f9")
    assert jobs[1].body == "-ERR NORMAL_TEMPORARY_FAILURE\n"


def test_given_show_channels_replies_then_only_the_empty_one_ends_in_newline():
    bodies = [f.body_text for f in iter_frames(_raw("inbound_originate_bgapi"))
              if f.content_type == "api/response" and "row_count" in f.body_text]
    assert bodies[-1] == '{"row_count": 0}\n'
    assert not bodies[0].endswith("\n") and json.loads(bodies[0])["row_count"] == 1


def test_given_dtmf_events_then_digits_are_decoded():
    events = [f.event() for f in iter_frames(_raw("outbound_gather_dtmf")) if f.content_type == "text/event-plain"]
    assert [e.get("DTMF-Digit") for e in events if e.name == "DTMF"] == ["1", "2", "3", "#"]
    done = [e for e in events if e.get("Application") == "play_and_get_digits" and e.name == "CHANNEL_EXECUTE_COMPLETE"]
    assert done[0].variable("pagd_digits") == "123"
    assert done[0].get("Application-Data").endswith(r"pagd_digits \d+")


def test_given_disconnect_notices_then_linger_and_disconnect_are_told_apart():
    frames = [f for f in iter_frames(_raw("outbound_caller_hangs_up")) if f.content_type == "text/disconnect-notice"]
    assert [f.headers.get("Content-Disposition") for f in frames] == ["linger", "disconnect"]
    assert frames[0].headers.get("Linger-Time") == "3"
    assert frames[1].body_text.startswith("Disconnected, goodbye.")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,20}", fullmatch=True), st.text(max_size=40)),
                min_size=1, max_size=20),
       st.text(max_size=60))
def test_given_any_headers_when_encoded_and_parsed_then_round_trip(headers, body):
    headers = [("Event-Name", "CUSTOM")] + [(n, v) for n, v in headers if n != "Content-Length"]
    data = encode_event_plain(headers, body)
    frames = FrameParser().feed(data)
    assert len(frames) == 1
    event = frames[0].event()
    got = [(n, v) for n, v in event.headers if n != "Content-Length"]
    assert got == headers
    assert event.body == body


def test_given_multiline_command_header_then_encoding_refuses_it():
    with pytest.raises(ValueError):
        encode_command("sendmsg", [("execute-app-arg", "a\nb")])


def test_given_event_when_variable_lookup_then_variable_prefix_is_applied():
    ev = Event([("Event-Name", "X"), ("variable_a", "1"), ("variable_a", "2")])
    assert ev.variable("a") == "1"
    assert ev.get_all("variable_a") == ["1", "2"]
    assert parse_event_plain(b"Event-Name: X\nA: %2B1%20b\n\n").get("A") == "+1 b"
