"""The media verbs on the real switch (issues 9 and 15): record (wav, mp3, mono/stereo) leaves a
file with real audio and reports its length; listen streams audio to a local WebSocket sink in
every mode and rate, and a sink that cannot be reached ends the call with the reason; gather
reads RFC 2833 digits, speaks its say prompt and reaches pocketsphinx; dial and conference with
``record: true`` report their recordings like the record verb."""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import ssl
import struct
import threading
import wave
from pathlib import Path

import pytest

from tests.plugins.webhook_server import Reply
from tests.realswitch.provision import poll
from tests.realswitch.rtp_pcap import talk_pcap
from tests.realswitch.sipp import SCENARIOS

TALK = "uac-talk-bye.xml"      # PCMA caller: 7 s of speech (g711a.pcap), BYE after 4 s
DTMF = "uac-dtmf.xml"          # presses 1 then # (RFC 2833) 1.5 s after the answer
SPEAK = "uac-talk-then-wait.xml"  # PCMA caller: 1.5 s of speech, then silence until the BYE
TALK_SECONDS = 4.0
TALK_PCAP_TEMPLATE = "uac-talk-pcap.xml.tmpl"  # {pcap} in {ptime} ms packets, BYE after {talk_ms}
RECORDING_TOLERANCE_SECONDS = 0.1  # a recording is as long as the answered call, within 100 ms
AUDIO_FORK_SUBPROTOCOL = "audio.drachtio.org"
_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _talk(sipp, number: str):
    return sipp.call(number, codec="PCMA", scenario=TALK)


def _answered_seconds(record: dict) -> float:
    """How long the call was answered: FreeSWITCH's billmsec, the record's ``talk_ms``."""
    return record["talk_ms"] / 1000


def _wav_seconds(path: str | Path) -> tuple[float, int]:
    with wave.open(str(path)) as wav:
        return wav.getnframes() / wav.getframerate(), wav.getnchannels()


def _wait_completed(tenant, record: dict) -> dict:
    prefix = f"{tenant.account_id}_{record['call_id']}_"
    events = poll(lambda: [e for e in (p for p in (ev["payload"] for ev in tenant.events(
        "media.recording.completed")) if Path(p["path"]).name.startswith(prefix))], timeout=10)
    assert events, f"no media.recording.completed for call {record['call_id']}"
    assert len(events) == 1, events
    return events[0]


# -- record ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,stereo", [("wav", True), ("wav", False), ("mp3", True)])
def test_record_keeps_the_call_up_and_leaves_a_file_with_the_callers_audio(
        tenant, sipp, real_switch, hook_server, fmt, stereo):
    status_hook = hook_server.url("/recording")
    number = tenant.number_for([{"verb": "record", "format": fmt, "stereo": stereo,
                                 "statusHook": status_hook}])
    result = _talk(sipp, number)
    assert result.ok, result.errors or result.stdout[-2000:]  # the caller hung up, not the switch
    record = tenant.wait_record(number)[0]
    assert record["has_recording"] is True
    assert record["duration_ms"] >= TALK_SECONDS * 1000 * 0.9  # held, not ended within 40 ms
    event = _wait_completed(tenant, record)
    path = Path(event["path"])
    assert path.parent == real_switch.recordings and path.suffix == f".{fmt}"
    assert (event["format"], event["stereo"], event["statusHook"]) == (fmt, stereo, status_hook)
    assert (event["callId"], event["accountSid"]) == (str(record["call_id"]), str(tenant.account_id))
    # the whole answered call, not two thirds of it (issue 27: sipp's pcap has 30 ms packets)
    tolerance = RECORDING_TOLERANCE_SECONDS
    assert abs(event["seconds"] - _answered_seconds(record)) <= tolerance, (
        event["seconds"], record["talk_ms"])
    assert event["completionCause"]
    if fmt == "wav":
        seconds, channels = _wav_seconds(path)
        assert channels == (2 if stereo else 1)
        assert abs(seconds - _answered_seconds(record)) <= tolerance, (seconds, record["talk_ms"])
    else:  # MPEG audio: at 8 kHz mono/stereo a second is a few kB, the empty file 684 bytes
        data = path.read_bytes()
        assert data[:3] == b"ID3" or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)
        assert len(data) > 4000


@pytest.fixture(scope="module")
def talk_scenario(tmp_path_factory):
    """(ptime ms, codec) → a caller scenario streaming speech in those packets, BYE after 4 s."""
    folder = tmp_path_factory.mktemp("talk-pcap")
    template = (SCENARIOS / TALK_PCAP_TEMPLATE).read_text()

    def make(ptime_ms: int, codec: str) -> str:
        pcap = talk_pcap(folder, ptime_ms=ptime_ms, codec=codec)
        path = folder / f"uac-talk-{codec}-{ptime_ms}ms.xml"
        path.write_text(template.replace("{pcap}", str(pcap))
                        .replace("{talk_ms}", str(int(TALK_SECONDS * 1000))))
        return str(path)
    return make


@pytest.mark.parametrize("stereo", [True, False], ids=["stereo", "mono"])
@pytest.mark.parametrize("codec", ["PCMU", "PCMA"])
@pytest.mark.parametrize("ptime_ms", [20, 30, 40])
def test_a_recording_is_as_long_as_the_answered_call_whatever_the_callers_packet_size(
        tenant, sipp, talk_scenario, ptime_ms, codec, stereo):
    """A caller sending 30 or 40 ms packets without a=ptime makes FreeSWITCH change its end
    mid-call ("Asynchronous PTIME not supported"); the recording kept 2.48 s (30 ms) and 1.86 s
    (40 ms) of a 4 s call while the hold's playback was paced by the caller's packets, then
    3.71 s and 3.6 s while record_session's pre-buffer was flushed by the change."""
    number = tenant.number_for([{"verb": "record", "format": "wav", "stereo": stereo}])
    result = sipp.call(number, codec=codec, scenario=talk_scenario(ptime_ms, codec))
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    assert record["talk_ms"] >= TALK_SECONDS * 1000 * 0.9, record["talk_ms"]
    event = _wait_completed(tenant, record)
    seconds, channels = _wav_seconds(event["path"])
    assert channels == (2 if stereo else 1)
    assert abs(seconds - _answered_seconds(record)) <= RECORDING_TOLERANCE_SECONDS, (
        f"{seconds:.3f} s recorded of a {record['talk_ms']} ms call")


# -- listen ------------------------------------------------------------------------------------
class AudioSink:
    """A WebSocket server for mod_audio_fork (subprotocol audio.drachtio.org): records the
    metadata text frame and counts the binary audio bytes of each connection."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.tls = tls
        self.tls_errors: list[str] = []
        self.connections: list[dict] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        scheme = "wss" if self.tls else "ws"
        return f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}/listen"

    def close(self) -> None:
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        if self.tls is not None:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError) as exc:  # the switch refused our certificate
                self.tls_errors.append(str(exc))
                conn.close()
                return
        reader = conn.makefile("rb")
        state = {"path": reader.readline().decode("latin-1").split(" ")[1], "text": [],
                 "binary_bytes": 0, "closed": False, "protocol": None}
        headers = {}
        while True:
            line = reader.readline().decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        state["protocol"] = headers.get("sec-websocket-protocol")
        accept = base64.b64encode(hashlib.sha1(
            (headers["sec-websocket-key"] + _WS_GUID).encode()).digest()).decode()
        conn.sendall((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
                      f"Sec-WebSocket-Protocol: {AUDIO_FORK_SUBPROTOCOL}\r\n\r\n").encode())
        self.connections.append(state)
        try:
            while True:
                head = reader.read(2)
                if len(head) < 2:
                    break
                opcode, size = head[0] & 0x0F, head[1] & 0x7F
                if size == 126:
                    size = struct.unpack("!H", reader.read(2))[0]
                elif size == 127:
                    size = struct.unpack("!Q", reader.read(8))[0]
                mask = reader.read(4) if head[1] & 0x80 else b"\0\0\0\0"
                payload = reader.read(size)
                if opcode == 0x1:
                    state["text"].append(bytes(c ^ mask[i % 4] for i, c in enumerate(payload)).decode())
                elif opcode == 0x2:
                    state["binary_bytes"] += len(payload)
                elif opcode == 0x8:
                    break
        except OSError:  # the switch dropped the stream: what arrived is already counted
            return
        finally:
            state["closed"] = True
            conn.close()


@pytest.fixture
def audio_sink():
    sink = AudioSink()
    yield sink
    sink.close()


@pytest.mark.parametrize("mix", ["mono", "stereo", "mixed"])
@pytest.mark.parametrize("rate", [8000, 16000])
def test_listen_streams_the_call_audio_to_a_local_websocket_sink(
        tenant, sipp, audio_sink, mix, rate):
    number = tenant.number_for([{"verb": "listen", "url": audio_sink.url, "mixType": mix,
                                 "sampleRate": rate, "metadata": {"test": "listen", "mix": mix}}])
    result = _talk(sipp, number)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    assert record["duration_ms"] >= TALK_SECONDS * 1000 * 0.9
    (conn,) = poll(lambda: [c for c in audio_sink.connections if c["closed"]] or None, timeout=10)
    assert conn["protocol"] == AUDIO_FORK_SUBPROTOCOL and conn["path"] == "/listen"
    assert json.loads(conn["text"][0]) == {"test": "listen", "mix": mix}
    # L16 at the requested rate, 2 channels in stereo: at least one of the ~4 s held arrived
    one_second = rate * 2 * (2 if mix == "stereo" else 1)
    assert conn["binary_bytes"] >= one_second, conn["binary_bytes"]
    assert all(e["payload"]["callId"] != str(record["call_id"])
               for e in tenant.events("interaction.listen.failed"))


def test_listen_to_a_sink_that_refuses_ends_the_call_with_the_reason_on_the_record(tenant, sipp):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused, after uuid_audio_fork said +OK
    number = tenant.number_for([{"verb": "listen", "url": f"ws://127.0.0.1:{port}/x"}])
    _talk(sipp, number)  # the switch hangs up first: sipp's own BYE is then unexpected
    record = tenant.wait_record(number)[0]
    assert record["hangup_reason"].startswith("listen_failed: conn fail"), record["hangup_reason"]
    assert record["duration_ms"] < TALK_SECONDS * 1000
    failed = [e["payload"] for e in tenant.events("interaction.listen.failed")
              if e["payload"]["callId"] == str(record["call_id"])]
    assert len(failed) == 1 and failed[0]["url"] == f"ws://127.0.0.1:{port}/x"


def test_listen_to_a_wss_sink_with_an_untrusted_certificate_ends_the_call_with_the_tls_reason(
        tenant, sipp, tls_ca):
    """The switch trusts only its CA bundle (a private CA goes in via SSL_CERT_FILE, docs/verbs.md):
    the handshake fails after uuid_audio_fork said +OK, and that is no longer silent."""
    issued = tls_ca.issue(["127.0.0.1"])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(issued.cert_file, issued.key_file)
    sink = AudioSink(tls=context)
    try:
        number = tenant.number_for([{"verb": "listen", "url": sink.url}])
        _talk(sipp, number)
        record = tenant.wait_record(number)[0]
    finally:
        sink.close()
    assert record["hangup_reason"].startswith("listen_failed: "), record["hangup_reason"]
    assert "cert" in record["hangup_reason"], record["hangup_reason"]
    assert sink.tls_errors and sink.connections == []  # the handshake itself failed


# -- gather ------------------------------------------------------------------------------------
def test_gather_reads_rfc2833_digits_from_the_caller(tenant, sipp, hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    number = tenant.number_for([{"verb": "gather", "finishOnKey": "#", "timeout": 8,
                                 "actionHook": hook_server.url("/digits")}])
    result = sipp.call(number, scenario=DTMF)
    assert result.ok, result.errors or result.stdout[-2000:]
    (request,) = hook_server.requests
    assert json.loads(request.body)["digits"] == "1"


def test_gather_say_prompt_is_spoken_not_refused(tenant, sipp, real_switch):
    sentence = ("Thank you for calling. This prompt is long on purpose, so that a silent "
                "or refused prompt would make the call end much sooner.")
    number = tenant.number_for([{"verb": "gather", "numDigits": 1, "timeout": 1,
                                 "say": {"text": sentence, "voice": "slt"}},
                                {"verb": "hangup"}])
    offset = real_switch.log_offset()
    result = sipp.call(number)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    log = real_switch.log_since(offset)
    assert "Invalid Args" not in log
    assert record["talk_ms"] >= 4000, record["talk_ms"]  # ~6 s of flite speech, then 1 s


def test_gather_without_prompt_waits_for_its_timeout(tenant, sipp, real_switch):
    number = tenant.number_for([{"verb": "gather", "numDigits": 1, "timeout": 2}, {"verb": "hangup"}])
    offset = real_switch.log_offset()
    result = sipp.call(number)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    assert "Invalid file format" not in real_switch.log_since(offset)
    assert record["talk_ms"] >= 2000, record["talk_ms"]


def test_speech_gather_reaches_pocketsphinx_with_the_prompt(tenant, sipp, real_switch, hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    number = tenant.number_for([{"verb": "gather", "input": ["speech"], "timeout": 3,
                                 "say": {"text": "Say yes or no."},
                                 "actionHook": hook_server.url("/speech")}])
    offset = real_switch.log_offset()
    result = sipp.call(number, codec="PCMA", scenario=SPEAK)
    assert result.ok, result.errors or result.stdout[-2000:]  # the hook's hangup ended the call
    (request,) = hook_server.requests
    body = json.loads(request.body)
    assert set(body) >= {"digits", "speech"}  # the words are wrong here (README: model)
    log = real_switch.log_since(offset)
    assert "play_and_detect_speech" in log
    assert "Error opening" not in log and "USAGE ERROR" not in log and "Invalid Args" not in log
    assert "mod_pocketsphinx" in log


def test_speech_gather_with_a_silent_caller_ends_after_its_timeout(tenant, sipp, hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    number = tenant.number_for([{"verb": "gather", "input": ["speech"], "timeout": 6,
                                 "say": {"text": "Say yes or no."},
                                 "actionHook": hook_server.url("/silent")}])
    result = sipp.call(number)  # sends no audio at all
    assert result.ok, result.errors or result.stdout[-2000:]  # the hook's hangup ended the call
    (request,) = hook_server.requests
    assert json.loads(request.body)["speech"] == ""  # pocketsphinx said <noinput/>
    record = tenant.wait_record(number)[0]
    # the gather's 6 s, not pocketsphinx's default 4 s no-input timeout, nor the caller's 60 s
    assert 6000 <= record["talk_ms"] < 15000, record["talk_ms"]


# -- recordings of dial and conference -----------------------------------------------------------
def test_dial_with_record_reports_the_recording_and_does_not_pre_answer_the_caller(
        tenant, sipp, real_switch):
    if not any(t["host"] == "127.0.0.1" for t in tenant.admin.get("/api/sip-targets")):
        tenant.admin.post("/api/sip-targets", {"host": "127.0.0.1"})  # sip: dials need listing
    callee = sipp.carrier(codec="PCMA", answer_delay_ms=500)
    try:
        number = tenant.number_for([{"verb": "dial", "record": True, "timeout": 10, "target": [
            {"type": "sip", "name": f"sip:callee@127.0.0.1:{callee.port}"}]}])
        offset = real_switch.log_offset()
        result = _talk(sipp, number)
        assert result.ok, result.errors or result.stdout[-2000:]
        log = real_switch.log_since(offset)
    finally:
        callee.stop()
    record = tenant.wait_record(number)[0]
    assert record["has_recording"] is True
    assert "Pre-Answer" not in log  # no 183 to the caller: the bridge answered it
    event = _wait_completed(tenant, record)
    assert (event["format"], event["stereo"]) == ("wav", True)
    assert event["seconds"] >= 1.0, event
    with wave.open(event["path"]) as wav:
        assert wav.getnchannels() == 2 and wav.getnframes() / wav.getframerate() >= 1.0


def test_conference_with_record_reports_the_callers_recording(tenant, sipp):
    number = tenant.number_for([{"verb": "conference", "name": "rec-room", "record": True}])
    result = _talk(sipp, number)
    assert result.ok, result.errors or result.stdout[-2000:]
    record = tenant.wait_record(number)[0]
    event = _wait_completed(tenant, record)
    assert event["seconds"] >= 1.0 and Path(event["path"]).exists()
