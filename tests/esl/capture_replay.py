"""Read the capture transcripts: exact byte chunks in both directions, in order."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from esl.protocol import FrameParser

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "esl_captures"
_MARKER = re.compile(rb"#### (>>> SENT|<<< RECEIVED) (\d+) bytes\n")


@dataclass
class Chunk:
    sent: bool
    data: bytes


def read_transcript(name: str, file: str = "transcript.txt") -> list[Chunk]:
    """Parse by byte count (a chunk may end mid-line; the next marker then follows directly)."""
    raw = (CAPTURES / name / file).read_bytes()
    chunks: list[Chunk] = []
    pos = 0
    while pos < len(raw):
        m = _MARKER.match(raw, pos)
        if m is None:
            raise ValueError(f"{name}: no marker at byte {pos}")
        n = int(m.group(2))
        start = m.end()
        chunks.append(Chunk(m.group(1) == b">>> SENT", raw[start:start + n]))
        pos = start + n
    return chunks


@dataclass
class SentCommand:
    text: bytes  # the exact bytes the controller sent
    events_before: int  # event frames FreeSWITCH had sent before this command


def sent_commands(name: str) -> list[SentCommand]:
    parser = FrameParser()
    events = 0
    out: list[SentCommand] = []
    for chunk in read_transcript(name):
        if chunk.sent:
            out.append(SentCommand(chunk.data, events))
        else:
            events += sum(1 for f in parser.feed(chunk.data) if f.content_type == "text/event-plain")
    return out


def outbound_captures() -> list[str]:
    return sorted(p.name for p in CAPTURES.iterdir() if p.is_dir() and p.name.startswith("outbound_"))


def _observations_only(folder: Path) -> bool:
    """A folder holding only notes.md records what the real switch did without its bytes
    (README: "notes only"); every other folder is a capture and must have its files."""
    return [f.name for f in folder.iterdir()] == ["notes.md"]


def all_captures() -> list[str]:
    return sorted(p.name for p in CAPTURES.iterdir() if p.is_dir() and not _observations_only(p))
