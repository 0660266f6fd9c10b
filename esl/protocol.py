"""ESL wire format: framing, header parsing and encoding (our own, not greenswitch's).

Why not greenswitch's parser (0.0.19, esl.py ``ESLEvent``/``receive_events``):
- it URL-decodes the WHOLE block before splitting lines, so an encoded ``%0A`` inside a value
  (``Reply-Text: %2BOK%0A`` of the ``connect`` reply, SDP in ``variable_switch_r_sdp``) becomes
  a fake header line;
- it stores headers in a dict, so the repeated ``Conference-*`` headers of a conference
  ``floor-change`` event are lost;
- it reads line by line with a decode per line and raises on a frame it does not expect.

This module is pure (no sockets): :class:`FrameParser` turns a byte stream into
:class:`Frame` objects, :func:`parse_event_plain` turns a ``text/event-plain`` body into an
:class:`Event`, and the ``encode_*`` helpers write the same format (used by the simulator and by
commands that carry a body).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Optional, overload
from urllib.parse import quote, unquote

# FreeSWITCH's switch_url_encode() escapes exactly these (plus control and non-ASCII bytes);
# '/', ',', '(', ')' and friends stay literal, as the captures show (Record-File-Path: /var/...).
_FS_UNSAFE = set('\r\n "#%&+:;<=>?@[\\]^`{|}')
_FS_SAFE = "".join(chr(c) for c in range(33, 127) if chr(c) not in _FS_UNSAFE)

HeaderList = list[tuple[str, str]]


def fs_url_encode(value: str) -> str:
    """Encode a header value the way FreeSWITCH does on the wire."""
    return quote(value, safe=_FS_SAFE)


def _decode(value: str) -> str:
    # unquote() is comparatively slow; most values carry no escape at all.
    return unquote(value) if "%" in value else value


class Event:
    """One ESL event or header block.

    Headers are kept as an ordered list of (name, value) pairs so a repeated name keeps every
    value (``get_all``); ``get`` returns the first, matching FreeSWITCH's own lookup.
    Values are URL-decoded.

    Events read off the wire are parsed lazily from their header text: the few ``get`` calls a
    dispatcher makes (Event-Name, Unique-ID, Application-UUID) are direct searches, and the
    full list is built (and every value decoded) on first need. A big channel event has ~150
    headers; parsing all of them for every event would cap a connection at a few thousand
    events/s on a modest CPU.
    """

    __slots__ = ("_headers", "body", "_first", "_raw", "_finds", "_encoded")

    _FULL_PARSE_AFTER = 6  # direct lookups before building the dict is cheaper

    def __init__(self, headers: Optional[HeaderList] = None, body: str = "", *,
                 raw: Optional[str] = None) -> None:
        self.body: str = body
        self._raw = raw
        self._finds = 0
        # after _FULL_PARSE_AFTER lookups: first value per name, still URL-encoded (a session
        # reads a dozen of a channel event's ~200 headers: only those are decoded)
        self._encoded: Optional[dict[str, str]] = None
        if raw is None:
            self._headers: Optional[HeaderList] = headers if isinstance(headers, list) else list(headers or [])
            # dict() keeps the last value per key: feed it reversed to keep the first (C speed).
            self._first: Optional[dict[str, str]] = dict(reversed(self._headers))
        else:
            self._headers = None
            self._first = None

    def _parse(self) -> None:
        self._headers = parse_header_lines(self._raw or "")
        self._first = dict(reversed(self._headers))
        self._raw = None
        self._encoded = None

    def _find(self, name: str) -> Optional[str]:
        raw = self._raw or ""
        key = name + ": "
        if raw.startswith(key):
            start = len(key)
        else:
            i = raw.find("\n" + key)
            if i < 0:
                return None
            start = i + len(key) + 1
        end = raw.find("\n", start)
        value = raw[start:] if end < 0 else raw[start:end]
        if value.endswith("\r"):
            value = value[:-1]
        return _decode(value)

    # -- lookups -------------------------------------------------------------------------------
    @property
    def headers(self) -> HeaderList:
        if self._headers is None:
            self._parse()
        return self._headers  # type: ignore[return-value]

    @overload
    def get(self, name: str, default: str) -> str: ...
    @overload
    def get(self, name: str, default: Optional[str] = None) -> Optional[str]: ...

    def get(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """First value of ``name``; with a ``str`` default the result is a ``str``."""
        first = self._first
        if first is None:
            encoded = self._encoded
            if encoded is None:
                self._finds += 1
                if self._finds <= self._FULL_PARSE_AFTER:
                    value = self._find(name)
                    return default if value is None else value
                encoded = self._encoded = dict(reversed(
                    parse_header_lines(self._raw or "", decode=False)))
            value = encoded.get(name)
            return default if value is None else _decode(value)
        return first.get(name, default)  # type: ignore[union-attr]

    def get_all(self, name: str) -> list[str]:
        return [v for n, v in self.headers if n == name]

    @overload
    def variable(self, name: str, default: str) -> str: ...
    @overload
    def variable(self, name: str, default: Optional[str] = None) -> Optional[str]: ...

    def variable(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """Channel variable ``name`` as carried by the ``variable_<name>`` header."""
        return self.get("variable_" + name, default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def add_header(self, name: str, value: str) -> None:
        headers = self.headers
        headers.append((name, value))
        self._first.setdefault(name, value)  # type: ignore[union-attr]

    # -- convenience ---------------------------------------------------------------------------
    @property
    def name(self) -> Optional[str]:
        return self.get("Event-Name")

    @property
    def subclass(self) -> Optional[str]:
        return self.get("Event-Subclass")

    @property
    def dispatch_key(self) -> Optional[str]:
        """The handler key: the subclass for CUSTOM events, else the event name."""
        name = self.get("Event-Name")
        if name == "CUSTOM":
            return self.get("Event-Subclass") or name
        return name

    @property
    def unique_id(self) -> Optional[str]:
        return self.get("Unique-ID")

    def as_dict(self) -> dict[str, str]:
        """First value per header (convenience for logging/tests; loses repeats)."""
        self.headers
        return dict(self._first)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"<Event {self.dispatch_key or self.get('Content-Type')}>"


def parse_header_lines(text: str, *, decode: bool = True) -> HeaderList:
    """Parse ``Name: value`` lines (no blank lines inside) into an ordered list."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    parts = [line.partition(": ") for line in text.split("\n") if line]
    if decode:
        out = [(n, unquote(v) if "%" in v else v) for n, _, v in parts]
    else:
        out = [(n, v) for n, _, v in parts]
    for i, (n, sep, v) in enumerate(parts):
        if not sep:
            # "Name:" with an empty value, or a stray line: keep it rather than crash.
            name, _, value = n.partition(":")
            out[i] = (name, value.strip())
    return out


def parse_event_plain(body: bytes | str) -> Event:
    """Parse a ``text/event-plain`` body: URL-encoded headers, blank line, optional body.

    The inner body (e.g. BACKGROUND_JOB's ``+OK <uuid>\\n``) is framed by an inner
    ``Content-Length`` header.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else body
    head, sep, rest = text.partition("\n\n")
    event = Event(raw=head)
    if sep and rest:
        length = event.get("Content-Length")
        if length is not None and length.isdigit():
            # Content-Length counts bytes; re-slice on bytes when non-ASCII is present.
            raw = rest.encode("utf-8")
            event.body = raw[: int(length)].decode("utf-8", "replace")
        else:
            event.body = rest
    return event


class Frame:
    """One message on the socket: outer headers and the raw body (if Content-Length)."""

    __slots__ = ("headers", "body")

    def __init__(self, headers: Event, body: bytes = b"") -> None:
        self.headers = headers
        self.body = body

    @property
    def content_type(self) -> Optional[str]:
        return self.headers.get("Content-Type")

    @property
    def reply_text(self) -> str:
        return self.headers.get("Reply-Text", "") or ""

    @property
    def body_text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def event(self) -> Event:
        """The event carried by this frame.

        ``text/event-plain`` frames carry it in the body; the ``connect`` reply carries the
        channel data in the outer header block itself (no Content-Length).
        """
        if self.content_type == "text/event-plain":
            return parse_event_plain(self.body)
        return Event(self.headers.headers, self.body_text)

    def __repr__(self) -> str:
        return f"<Frame {self.content_type} body={len(self.body)}>"


class ProtocolError(ValueError):
    """The byte stream is not ESL (e.g. a bad Content-Length); the connection must be dropped."""


MAX_HEADER_BLOCK = 1 << 20  # 1 MiB: a channel-data block is ~5 KiB; beyond this it is garbage.
MAX_BODY = 64 << 20


class FrameParser:
    """Incremental parser: ``feed(bytes)`` returns the complete frames received so far."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pending: Optional[Event] = None  # headers parsed, waiting for the body
        self._need = 0

    def feed(self, data: bytes) -> list[Frame]:
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        pos = 0
        n = len(buf)
        while True:
            if self._pending is not None:
                if n - pos < self._need:
                    break
                body = bytes(buf[pos : pos + self._need])
                pos += self._need
                frames.append(Frame(self._pending, body))
                self._pending = None
                continue
            # Skip stray blank lines between frames (FreeSWITCH never sends them, but be lenient).
            while pos < n and buf[pos] == 0x0A:
                pos += 1
            end = buf.find(b"\n\n", pos)
            if end < 0:
                if n - pos > MAX_HEADER_BLOCK:
                    raise ProtocolError("header block too large")
                break
            head = buf[pos:end].decode("utf-8", "replace")
            pos = end + 2
            # lazy: most blocks are read for two headers; the connect reply (the channel data,
            # ~200 headers) for a dozen
            headers = Event(raw=head)
            length = headers.get("Content-Length")
            if length is None:
                frames.append(Frame(headers))
                continue
            length = length.strip()
            if not length.isdigit() or int(length) > MAX_BODY:
                raise ProtocolError(f"bad Content-Length {length!r}")
            if int(length) == 0:
                frames.append(Frame(headers))
                continue
            self._pending = headers
            self._need = int(length)
        if pos:
            del buf[:pos]
        return frames

    @property
    def buffered(self) -> int:
        return len(self._buf)


def iter_frames(data: bytes) -> Iterator[Frame]:
    """Parse a whole capture (e.g. ``received.raw``) into frames."""
    parser = FrameParser()
    yield from parser.feed(data)
    if parser.buffered:
        raise ProtocolError(f"{parser.buffered} trailing bytes are not a complete frame")


# -- encoding ----------------------------------------------------------------------------------
def encode_header_lines(headers: Iterable[tuple[str, str]], *, encode: bool = True) -> str:
    if encode:
        return "".join(f"{n}: {fs_url_encode(v)}\n" for n, v in headers)
    return "".join(f"{n}: {v}\n" for n, v in headers)


def encode_event_plain(headers: Iterable[tuple[str, str]], body: str = "") -> bytes:
    """A complete ``text/event-plain`` frame as FreeSWITCH writes it."""
    headers = list(headers)
    if body:
        raw_body = body.encode("utf-8")
        headers = [(n, v) for n, v in headers if n != "Content-Length"]
        headers.append(("Content-Length", str(len(raw_body))))
        inner = (encode_header_lines(headers) + "\n").encode("utf-8") + raw_body
    else:
        inner = (encode_header_lines(headers) + "\n").encode("utf-8")
    outer = f"Content-Length: {len(inner)}\nContent-Type: text/event-plain\n\n".encode()
    return outer + inner


def encode_frame(headers: Iterable[tuple[str, str]], body: bytes | str = b"") -> bytes:
    """An outer frame with literal (not URL-encoded) headers and an optional body."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    head = encode_header_lines(headers, encode=False)
    if raw:
        head += f"Content-Length: {len(raw)}\n"
    return (head + "\n").encode("utf-8") + raw


def build_event_command(names: Iterable[str]) -> str:
    """``event plain`` with CUSTOM subclasses (names containing ``::``) after ``CUSTOM``."""
    plain: list[str] = []
    custom: list[str] = []
    for name in names:
        if "::" in name:
            custom.append(name)
        elif name != "CUSTOM" and name not in plain:
            plain.append(name)
    if custom:
        plain.append("CUSTOM")
        plain.extend(custom)
    return "event plain " + " ".join(plain)


def encode_command(command: str, headers: Iterable[tuple[str, str]] = (), body: str = "") -> bytes:
    """A command from the client side: first line, header lines, optional body.

    Header values must be single-line; multi-line content goes in ``body`` with a
    Content-Length (FreeSWITCH's sendmsg reads it as the app argument).
    """
    lines = [command]
    for name, value in headers:
        if "\n" in value or "\r" in value:
            raise ValueError(f"header {name!r} must be single-line; pass it as body")
        lines.append(f"{name}: {value}")
    raw_body = body.encode("utf-8") if body else b""
    if raw_body:
        # FreeSWITCH's sendmsg takes a multi-line app argument from a text/plain body.
        lines.append("content-type: text/plain")
        lines.append(f"content-length: {len(raw_body)}")
    return ("\n".join(lines) + "\n\n").encode("utf-8") + raw_body
