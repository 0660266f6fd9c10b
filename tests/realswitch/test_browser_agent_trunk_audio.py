"""A browser agent stays audible to a SIP trunk caller for the whole call (issue 27 item 2).

Chromium runs the SDK's example page (tests/sdk/browser.py; its fake microphone beeps twice a
second) and Debian's baresip (tests/realswitch/softphones.py) calls a queue number over the
trunk profile, sending a sweep and dumping what it receives to a WAV (its ``sndfile`` module).
The agent takes the call, they talk for 30 s, the agent hangs up. tshark records the switch's
RTP on loopback meanwhile (tests/realswitch/rtp_capture.py).

What a user hears: every second of the bridged call reaches the caller at speech level, and the
caller reaches the browser every second. What broke it: FreeSWITCH copied the browser's RTP
timestamps (random base, jumps over its silences) into the caller's stream, and the browser's
comfort-noise silences reached the caller as no packets at all (docs/agents.md "Browser agents
and trunk callers"). So the caller's stream is also checked: its timestamps follow the clock
and its packets never stop from the bridge to the hang-up.
"""
from __future__ import annotations

import math
import os
import time
import uuid

import pytest

from tests.plugins.eventually import eventually
from tests.realswitch.rtp_capture import RtpCapture, RtpPacket, tshark_available
from tests.realswitch.softphones import baresip_available, measure_wav, second_rms, sweep_wav
from tests.realswitch.test_agent_sdk_browser import (  # noqa: F401  (example_server, web_queue: fixtures)
    PASSWORD,
    _web_agent,
    example_server,
    web_queue,
)
from tests.sdk.browser import BrowserAgent, missing_reason

CALL_SECONDS = 30
SPEECH_RMS = 300            # int16 RMS of a second with speech-level audio (~ -40 dBFS); silence is < 10
BROWSER_SPEECH_LEVEL = 0.01  # the same on WebRTC's 0..1 audio level scale
CLOCK_SLACK_S = 0.5         # how far the caller's RTP clock may stray from the wall clock per packet
MAX_SILENCE_S = 0.5         # the longest the bridged caller may go without a packet (20 ms apart normally)
# received audio vs the caller's call: its last jitter-buffered frames and the switch's timer slips
# on a loaded machine (60-100 ms gaps; 0.25-0.46 s short over a 31 s call, measured) - a lost
# second of the agent would exceed it
LENGTH_TOLERANCE_S = 0.6

_MISSING = missing_reason() or baresip_available() or tshark_available()
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI=true and the browser agent / baresip caller test cannot run: {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=f"browser agent / baresip test skipped: {_MISSING}")


def _clock_jumps(packets: list[RtpPacket], rate: int = 8000) -> list[str]:
    """Consecutive packets whose RTP timestamps moved more than CLOCK_SLACK_S away from the
    time between their arrivals (a timestamp taken from another stream, or a wrap)."""
    jumps = []
    for (t0, _s0, q0, ts0), (t1, _s1, q1, ts1) in zip(packets, packets[1:]):
        moved = ((ts1 - ts0 + 2**31) % 2**32 - 2**31) / rate
        if abs(moved - (t1 - t0)) > CLOCK_SLACK_S:
            jumps.append(f"seq {q0}->{q1} at {t1 - packets[0][0]:.2f}s: ts {ts0}->{ts1} ({moved:+.1f}s of audio in {t1 - t0:.2f}s)")
    return jumps


def _silences(packets: list[RtpPacket], since: float, until: float) -> list[str]:
    """Stretches longer than MAX_SILENCE_S without a packet between ``since`` and ``until``
    (epoch s): a stream that stalled or stopped early, which its timestamps alone would not show
    when the switch's clock stalled with it."""
    times = [since] + [t for t, *_ in packets if since <= t <= until] + [until]
    return [f"{t1 - t0:.2f}s without a packet from {t0 - since:.2f}s after the bridge"
            for t0, t1 in zip(times, times[1:]) if t1 - t0 > MAX_SILENCE_S]


def test_a_browser_agent_and_a_baresip_trunk_caller_hear_each_other_for_the_whole_30_s_call(
        tenant, real_switch, web_queue, example_server, softphones, realswitch_workdir):  # noqa: F811
    server, logdir = example_server
    folder = realswitch_workdir / f"browser-trunk-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    name, _agent, sip = _web_agent(tenant, real_switch, web_queue["id"])
    number = tenant.number_for([{"verb": "queue", "name": web_queue["name"]}])
    browser = BrowserAgent(server.url(tenant.subdomain), name, PASSWORD, sip=sip,
                           wss_url=f"wss://127.0.0.1:{real_switch.ports.agent_wss}", logdir=logdir)
    capture = None
    levels: list[float] = []
    try:
        browser.expect("ready", timeout=60)
        capture = RtpCapture(folder / "rtp.pcap", real_switch.ports.rtp_start, real_switch.ports.rtp_end)
        caller = softphones.baresip("caller", source=sweep_wav(folder, CALL_SECONDS + 30))
        caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
        established = caller.wait_established()["at"]  # the queue answers before it offers the agent
        browser.command("take", "connected")
        bridged_at, bridged_epoch = time.monotonic(), time.time()
        # `connected` is the server's word that the legs are bridged; the browser's inbound-rtp
        # statistics exist only from its first decrypted packet, which can come a few ms later
        previous = eventually(lambda: browser.command("stats", "stats")["inbound"], timeout=10,
                              what="the caller's first RTP packet at the browser")
        first_audio_s = time.monotonic() - bridged_at
        for _second in range(CALL_SECONDS):
            time.sleep(1)  # scenario: one second of talk, then the browser's audio energy of it
            now = browser.command("stats", "stats")["inbound"]
            span = now["totalSamplesDuration"] - previous["totalSamplesDuration"]
            levels.append(math.sqrt((now["totalAudioEnergy"] - previous["totalAudioEnergy"]) / span) if span else 0.0)
            previous = now
        hangup_epoch = time.time()
        browser.command("hangup", "ended")
        caller.wait_closed(timeout=15)  # baresip got the agent's BYE
        call_seconds = caller.call_seconds()
    finally:
        browser.close()
        softphones.stop_all()
        if capture:
            capture.stop()
    switch_port = caller.log_matches(r"receiving from 127\.0\.0\.1:(\d+)")
    assert switch_port, caller.log_text()[-2000:]
    wraps = len(caller.log_matches(r"wraps backwards"))
    heard = measure_wav(caller.received_wav())
    rms = second_rms(caller.received_wav())
    first = math.ceil(bridged_at - established)  # the dump starts at the answer (queue music until the bridge)
    bridged = [round(r) for r in rms[first:]]
    packets = capture.rtp_from(int(switch_port[0][1]))
    jumps = _clock_jumps(packets)
    silences = _silences(packets, bridged_epoch, hangup_epoch)
    bridged_packets = sum(1 for t, *_ in packets if bridged_epoch <= t <= hangup_epoch)
    print(f"\ncaller: {heard.seconds:.2f} s received of a {call_seconds:.2f} s call, {len(packets)} RTP packets, "
          f"bridged seconds' RMS {bridged}, "
          f"'wraps backwards' {wraps}, clock jumps {jumps[:3]}, {bridged_packets} packets in the "
          f"{hangup_epoch - bridged_epoch:.2f} s bridged, silences {silences}\n"
          f"browser: first packet {first_audio_s:.3f} s after `connected`, "
          f"the caller's level each second {[round(v, 3) for v in levels]}\nfolders {folder} {caller.folder}")
    assert not jumps, jumps                                 # the switch's own clock on the caller's stream
    assert not silences, silences                           # and its packets never stopped
    assert wraps == 0                                       # baresip dropped nothing
    assert abs(heard.seconds - call_seconds) <= LENGTH_TOLERANCE_S, (heard, call_seconds)  # the whole call
    # every whole second from the bridge to the hang-up (their part-seconds left out) at speech level
    assert len(bridged) >= CALL_SECONDS - 2 and min(bridged) > SPEECH_RMS, bridged
    assert min(levels) > BROWSER_SPEECH_LEVEL, levels      # the caller heard by the agent every second
