"""A minimal SIP-over-WebSocket (RFC 7118) registrar client, what a browser agent's SIP stack
does on the wire: REGISTER over ``wss://`` (subprotocol ``sip``), answer the digest
challenge, read the 200. Used to prove the internal profile's WSS listener authenticates
agents from the generated directory without a browser."""
from __future__ import annotations

import hashlib
import re
import ssl
import uuid
from contextlib import contextmanager
from typing import Iterator

import websocket


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()  # noqa: S324 - SIP digest


def _register_message(user: str, domain: str, call_id: str, cseq: int, expires: int, auth: str = "") -> str:
    branch = "z9hG4bK" + uuid.uuid4().hex[:12]
    lines = [f"REGISTER sip:{domain} SIP/2.0",
             f"Via: SIP/2.0/WSS {uuid.uuid4().hex[:8]}.invalid;branch={branch}",
             "Max-Forwards: 70",
             f"From: <sip:{user}@{domain}>;tag={uuid.uuid4().hex[:8]}",
             f"To: <sip:{user}@{domain}>",
             f"Call-ID: {call_id}",
             f"CSeq: {cseq} REGISTER",
             f"Contact: <sip:{user}@{uuid.uuid4().hex[:8]}.invalid;transport=ws>;expires={expires}",
             f"Expires: {expires}"]
    if auth:
        lines.append(auth)
    lines += ["Content-Length: 0", "", ""]
    return "\r\n".join(lines)


def _status(message: str) -> int:
    return int(message.split(" ", 2)[1])


@contextmanager
def wss_registration(host: str, port: int, user: str, password: str, domain: str, *,
                     expires: int = 60, timeout: float = 10.0) -> Iterator[list[int]]:
    """REGISTER with digest over WSS; yields the SIP status codes received, in order, while
    the WebSocket stays open (sofia drops a WS registration when its connection closes, as
    when a browser tab goes away)."""
    ws = websocket.create_connection(f"wss://{host}:{port}", subprotocols=["sip"], timeout=timeout,
                                     sslopt={"cert_reqs": ssl.CERT_NONE, "check_hostname": False})
    try:
        yield _register(ws, user, password, domain, expires)
    finally:
        ws.close()


def _register(ws: "websocket.WebSocket", user: str, password: str, domain: str, expires: int) -> list[int]:
    """One REGISTER, the digest challenge answered; the SIP statuses received."""
    call_id = uuid.uuid4().hex
    ws.send(_register_message(user, domain, call_id, 1, expires))
    first = ws.recv()
    statuses = [_status(first)]
    if statuses[0] != 401:
        return statuses
    challenge = re.search(r"WWW-Authenticate: Digest (.*)", first, re.I).group(1)
    realm = re.search(r'realm="([^"]+)"', challenge).group(1)
    nonce = re.search(r'nonce="([^"]+)"', challenge).group(1)
    uri = f"sip:{domain}"
    ha1 = _md5(f"{user}:{realm}:{password}")
    qop = "auth" if re.search(r'qop="?auth', challenge) else ""
    if qop:
        cnonce, nc = uuid.uuid4().hex[:16], "00000001"
        response = _md5(f"{ha1}:{nonce}:{nc}:{cnonce}:{qop}:{_md5(f'REGISTER:{uri}')}")
        extra = f', qop={qop}, nc={nc}, cnonce="{cnonce}"'
    else:
        response = _md5(f"{ha1}:{nonce}:{_md5(f'REGISTER:{uri}')}")
        extra = ""
    auth = (f'Authorization: Digest username="{user}", realm="{realm}", nonce="{nonce}", '
            f'uri="{uri}", response="{response}", algorithm=MD5{extra}')
    ws.send(_register_message(user, domain, call_id, 2, expires, auth))
    statuses.append(_status(ws.recv()))
    return statuses
