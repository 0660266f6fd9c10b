"""Real softphones against the real switch (softphones.py): what a caller *hears*.

Debian's baresip 1.0 and linphonec 5.1 decode what they receive and write it to WAV; each test
asserts the figure a user cares about — received audio that is speech, not silence, lasting
as long as the call — where sipp could only prove that packets flowed.
"""
from __future__ import annotations

from tests.realswitch.softphones import measure_wav

SENTENCE = ("Thank you for calling. This sentence is spoken by the switch so that a real "
            "softphone can prove it heard the whole of it, from the first word to the last.")
SPEECH_DBFS = -40.0          # speech level: flite says ~ -29 dBFS, the sipp speech ~ -20; silence < -60
LENGTH_TOLERANCE_SECONDS = 0.3  # received audio vs the answered call (jitter buffer, 1st packet)


def test_baresip_trunk_caller_hears_the_whole_spoken_sentence(tenant, real_switch, softphones):
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    caller = softphones.baresip("trunk-caller")
    caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
    caller.wait_established()
    caller.wait_closed(timeout=40)  # the application hangs up after the sentence
    record = tenant.wait_record(number)[0]
    heard = measure_wav(caller.received_wav())
    print(f"baresip caller heard {heard} of a {record['talk_ms']} ms call")
    assert record["status"] == "completed"
    assert heard.rms_dbfs > SPEECH_DBFS, heard
    assert abs(heard.seconds - record["talk_ms"] / 1000) <= LENGTH_TOLERANCE_SECONDS, (
        heard, record["talk_ms"])
    # the sentence fills the call: speech (not silence) for most of it, up to its end
    assert heard.active_seconds >= 0.7 * heard.seconds, heard
    assert heard.last_active_second >= heard.seconds - 1.0, heard
