"""RTP pcap files for sipp's ``play_pcap_audio`` with the packet size and codec a test asks for.

sip-tester ships one talking pcap, ``g711a.pcap``: 7 s of A-law speech in 30 ms packets (240
bytes, timestamps +240), and its callers offer no ``a=ptime``. Carriers send 20, 30 or 40 ms,
PCMU or PCMA, so the tests need all six: this module re-packetises that speech (converting A-law
to mu-law for PCMU) and writes a pcap sipp replays at the packets' own pace. Written at test
time into the run's folder, so no binary fixture lives in the repository.
"""
from __future__ import annotations

import struct
import wave
from pathlib import Path

SIPP_TALK_PCAP = Path("/usr/share/sip-tester/g711a.pcap")
SAMPLE_RATE = 8000
PAYLOAD_TYPES = {"PCMU": 0, "PCMA": 8}
_LINKTYPE_ETHERNET = 1
_HEADERS = 14 + 20 + 8  # Ethernet, IPv4 without options, UDP


def read_rtp_payloads(path: Path) -> list[bytes]:
    """The RTP payloads (header stripped) of a little-endian Ethernet pcap, in file order."""
    data = path.read_bytes()
    magic, linktype = data[:4], struct.unpack("<I", data[20:24])[0]
    if magic != b"\xd4\xc3\xb2\xa1" or linktype != _LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: not a little-endian Ethernet pcap")
    payloads, offset = [], 24
    while offset + 16 <= len(data):
        size = struct.unpack("<I", data[offset + 8:offset + 12])[0]
        packet = data[offset + 16:offset + 16 + size]
        offset += 16 + size
        rtp = packet[_HEADERS:]
        csrc = rtp[0] & 0x0F
        payloads.append(rtp[12 + 4 * csrc:])
    return payloads


def alaw_to_linear(byte: int) -> int:
    """G.711 A-law code → 16-bit linear sample."""
    a = byte ^ 0x55
    seg = (a & 0x70) >> 4
    value = (a & 0x0F) << 4
    value = value + 8 if seg == 0 else (value + 0x108) << (seg - 1)
    return value if a & 0x80 else -value


_ULAW_SEGMENT_ENDS = (0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF)


def linear_to_ulaw(sample: int) -> int:
    """16-bit linear sample → G.711 mu-law code (the ITU reference coder on 14 bits)."""
    value = sample >> 2
    mask = 0x7F if value < 0 else 0xFF
    value = min(abs(value), 8159) + (0x84 >> 2)
    for segment, end in enumerate(_ULAW_SEGMENT_ENDS):
        if value <= end:
            return ((segment << 4) | ((value >> (segment + 1)) & 0x0F)) ^ mask
    return 0x7F ^ mask  # beyond the last segment: the loudest code


_ALAW_TO_ULAW = bytes(linear_to_ulaw(alaw_to_linear(code)) for code in range(256))


def talk_pcap(folder: Path, *, ptime_ms: int, codec: str) -> Path:
    """sip-tester's 7 s of speech as ``codec`` in ``ptime_ms`` packets; returns the pcap path."""
    alaw = b"".join(read_rtp_payloads(SIPP_TALK_PCAP))
    audio = alaw if codec == "PCMA" else alaw.translate(_ALAW_TO_ULAW)
    return _write_pcap(folder / f"talk-{codec}-{ptime_ms}ms.pcap", audio, ptime_ms=ptime_ms, codec=codec)


def wav_pcap(folder: Path, wav: Path) -> Path:
    """An 8 kHz mono 16-bit WAV (e.g. ../shared/freeswitch/amd/machine_greeting_beep.wav) as
    PCMU in 20 ms packets: a callee that plays that file once it answered."""
    with wave.open(str(wav)) as src:
        if (src.getframerate(), src.getnchannels(), src.getsampwidth()) != (SAMPLE_RATE, 1, 2):
            raise ValueError(f"{wav}: not 8 kHz mono 16-bit")
        frames = src.readframes(src.getnframes())
    samples = struct.unpack(f"<{len(frames) // 2}h", frames)
    audio = bytes(linear_to_ulaw(sample) for sample in samples)
    return _write_pcap(folder / f"{wav.stem}-PCMU-20ms.pcap", audio, ptime_ms=20, codec="PCMU")


def _write_pcap(path: Path, audio: bytes, *, ptime_ms: int, codec: str) -> Path:
    """``audio`` (G.711 codes of ``codec``) as RTP packets of ``ptime_ms`` at their own pace."""
    samples = SAMPLE_RATE * ptime_ms // 1000
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, _LINKTYPE_ETHERNET)]
    for seq, start in enumerate(range(0, len(audio) - samples + 1, samples)):
        rtp = struct.pack("!BBHII", 0x80, (0x80 if seq == 0 else 0) | PAYLOAD_TYPES[codec],
                          seq, seq * samples, 0x5B1D5EED) + audio[start:start + samples]
        udp = struct.pack("!HHHH", 6000, 6002, 8 + len(rtp), 0) + rtp
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17, 0,
                         bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1])) + udp
        frame = b"\0" * 12 + b"\x08\x00" + ip
        usec = seq * ptime_ms * 1000
        out.append(struct.pack("<IIII", usec // 1_000_000, usec % 1_000_000, len(frame), len(frame)))
        out.append(frame)
    path.write_bytes(b"".join(out))
    return path
