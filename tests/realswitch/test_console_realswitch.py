"""The console against the real switch (issue 22): a sipp trunk call shows on the Live view
while it runs and leaves it when it ends, then is found in Call records with its recording
playable (the ticket stream answered by HTTP Range) and its transcript. Chromium through
playwright-core runs web/e2e/realswitch.test.js against this suite's ``sbc api`` process (the
harness's, with the real controller and workers); the browser half and this half meet through
two files in ``tmp_path``: the page is ready before the call is placed, and the call's record,
recording and transcript are known before the page looks for them.

Without node, chromium or web/node_modules it skips, except under CI=true."""
from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.console.test_console_browser import ARTIFACTS, ROOT, _missing, run_e2e
from tests.plugins.eventually import eventually
from tests.plugins.skips import skip_or_fail_in_ci
from tests.realswitch.product import Product
from tests.realswitch.provision import ADMIN_PASSWORD, Tenant, poll
from tests.realswitch.sipp import Sipp

TALK = "uac-talk-bye.xml"  # PCMA caller: sip-tester's g711a.pcap speech, BYE after 4 s
PIPELINE_SECONDS = 90      # one media worker on a shared 2-core machine, pocketsphinx
PAGE_READY_SECONDS = 60    # chromium start and sign-in on a shared 2-core machine
SUITE_TIMEOUT_SECONDS = 240
E2E_TESTS = 2  # the tests of web/e2e/realswitch.test.js: all of them must have run


def _transcribed(tenant: Tenant, record_id: str) -> dict | None:
    transcript = tenant.admin.get(f"/api/call-records/{record_id}/transcript", expect=(200, 404))
    return transcript if transcript and transcript.get("segments") else None


def _pipeline_state(tenant: Tenant, product: Product, record_id: str) -> str:
    """Why no transcript: the recording rows, the transcript answer and the workers' log."""
    recordings = tenant.admin.get(f"/api/call-records/{record_id}/recordings")["items"]
    answer = tenant.admin.get(f"/api/call-records/{record_id}/transcript", expect=(200, 404))
    return (f"no transcript with segments of {record_id} within {PIPELINE_SECONDS} s\n"
            f"recordings: {recordings}\ntranscript: {answer}\n"
            f"media consumers: {product.media_consumers()}\nworkers log:\n{product.workers.log_tail(60)}")


@pytest.mark.timeout(SUITE_TIMEOUT_SECONDS + PIPELINE_SECONDS + 60)
def test_a_sipp_call_shows_live_then_in_call_records_with_its_recording_and_transcript(
        tenant: Tenant, sipp: Sipp, product: Product, tmp_path: Path) -> None:
    missing = _missing(sso=False)
    if missing:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    product.wait_media_workers()  # else the first recording of a fresh vhost has no queue yet
    number = tenant.number_for([{"verb": "record", "format": "wav", "stereo": True}])
    ready, call_file = tmp_path / "live-ready", tmp_path / "call.json"
    setup = {"port": product.api_port, "password": ADMIN_PASSWORD, "artifacts": str(ARTIFACTS),
             "python": sys.executable, "root": str(ROOT), "subdomain": tenant.subdomain,
             "number": number, "ready": str(ready), "call": str(call_file)}
    with ThreadPoolExecutor(1) as pool:
        browser = pool.submit(run_e2e, "e2e/realswitch.test.js", setup, E2E_TESTS, SUITE_TIMEOUT_SECONDS)
        try:
            eventually(lambda: ready.exists() or browser.done(), timeout=PAGE_READY_SECONDS, interval=0.1,
                       what="the Live view open in chromium")
            if browser.done():
                browser.result()  # the browser half failed before the call: its output
            result = sipp.call(number, codec="PCMA", scenario=TALK)
            assert result.ok, result.errors or result.stdout[-2000:]
            record = tenant.wait_record(number)[0]
            record_id = str(record["public_id"])
            transcript = poll(lambda: _transcribed(tenant, record_id), PIPELINE_SECONDS)
            assert transcript, _pipeline_state(tenant, product, record_id)
            recording = tenant.admin.get(f"/api/call-records/{record_id}/recordings")["items"][0]
        except BaseException as failure:  # the browser half stops waiting for the call
            call_file.write_text(json.dumps({"abort": repr(failure)}))
            raise
        call_file.write_text(json.dumps({
            "id": record_id, "talkMs": record["talk_ms"], "recordingMs": recording["duration_ms"],
            "bytes": recording["size_bytes"],
            "segments": [{k: seg[k] for k in ("speaker", "text", "polarity")} for seg in transcript["segments"]]}))
        output = browser.result()
    assert recording["duration_ms"] > 3000, recording  # the caller talked 4 s
    print(f"\ncall talk {record['talk_ms']} ms, recording {recording['duration_ms']} ms, "
          f"{recording['size_bytes']} bytes, transcript: {[s['text'] for s in transcript['segments']]}")
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))
