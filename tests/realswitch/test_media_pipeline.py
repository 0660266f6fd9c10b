"""The media pipeline behind the real switch (issue 11): a caller's recorded speech goes from
FreeSWITCH's file through the real ``sbc workers`` (its ``sbc media-worker`` child, default
pocketsphinx engine) to a transcript, the call record's sentiment columns, the bus and the
statusHook; the API streams the audio with HTTP Range."""
from __future__ import annotations

import json

import pytest

from tests.realswitch.provision import poll

TALK = "uac-talk-bye.xml"  # PCMA caller: sip-tester's g711a.pcap speech, BYE after 4 s
PIPELINE_SECONDS = 90      # one media worker on a shared 2-core machine, pocketsphinx


@pytest.mark.parametrize("fmt", ["wav", "mp3"])
def test_recorded_call_is_transcribed_scored_and_notified(tenant, sipp, product, hook_server, fmt):
    status_hook = hook_server.url(f"/recording-{fmt}")
    number = tenant.number_for([{"verb": "record", "format": fmt, "stereo": True,
                                 "statusHook": status_hook}])
    result = sipp.call(number, codec="PCMA", scenario=TALK)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]

    url = f"/api/call-records/{record['public_id']}/transcript"
    transcript = poll(lambda: (t := tenant.admin.get(url, expect=(200, 404))) and "segments" in t and t,
                      PIPELINE_SECONDS)
    recordings = tenant.admin.get(f"/api/call-records/{record['public_id']}/recordings")["items"]

    assert transcript and "segments" in transcript, transcript
    assert [r["status"] for r in recordings] == ["transcribed"]
    assert recordings[0]["format"] == fmt and recordings[0]["stereo"] is True
    assert transcript["engine"] == "pocketsphinx"
    # the caller spoke (left channel); the switch side was silent while recording
    assert transcript["segments"], transcript
    assert {s["speaker"] for s in transcript["segments"]} == {"caller"}
    row = tenant.records(number)[0]
    assert row["has_transcript"] is True
    assert row["recording_url"] == f"/api/recordings/{recordings[0]['id']}"
    keys = [e["key"] for e in tenant.events("media.transcription.") + tenant.events("sentiment.")
            if e["payload"].get("recordingId") == recordings[0]["id"]]
    assert keys.count("media.transcription.complete") == 1 and keys.count("sentiment.summary") == 1

    bodies = poll(lambda: (b := [json.loads(r.body) for r in hook_server.requests
                                 if r.path == f"/recording-{fmt}"]) and len(b) >= 2 and b, 30)
    assert [b["event"] for b in bodies] == ["recording.ready", "transcript.ready"]

    audio_url = product.url(recordings[0]["audio_url"])
    part = tenant.admin.http.get(audio_url, headers={"Range": "bytes=0-99"}, timeout=15)
    assert part.status_code == 206 and len(part.content) == 100
    whole = tenant.admin.http.get(audio_url, timeout=15)
    assert whole.status_code == 200 and len(whole.content) == recordings[0]["size_bytes"]
