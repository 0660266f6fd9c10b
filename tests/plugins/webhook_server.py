"""Real local servers for the webhook tests: HTTP, HTTPS (throw-away CA) and WebSocket.

Everything listens on 127.0.0.1 on an ephemeral port and is driven by a script of canned
replies, recording every request byte-for-byte so tests can verify signatures over the raw
body exactly as a customer's server would.

* ``hook_server``         plain HTTP (gevent.pywsgi)
* ``tls_ca``              a CA generated with ``cryptography`` for the session; ``issue(names)``
                          writes a server cert/key signed by it
* ``https_hook_server``   factory: HTTPS server presenting a cert for the given names
* ``ws_server``           minimal RFC 6455 server (handshake, masked text frames, close),
                          enough to act as a jambonz-style call handler app
* ``webhook_dns``         the test machine has no DNS: installs a StaticResolver as the
                          process default (``hooks.example.com`` → a public address,
                          ``hooks.test``/``app.test`` → 127.0.0.1, ``internal.example.com`` →
                          10.0.0.5); ``webhook_dns.add(name, ip)`` adds names. Use it in API
                          tests that save URLs through ``check_url_on_save``.
"""
from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import ipaddress
import json
import socket
import ssl
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import gevent
import gevent.event
import gevent.pywsgi
import gevent.server
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.webhooks.resolver import StaticResolver
from app.webhooks.url_guard import set_default_resolver
from tests.plugins.eventually import eventually


@pytest.fixture
def webhook_dns() -> Iterator[StaticResolver]:
    resolver = StaticResolver({
        "hooks.example.com": "93.184.215.14",
        "hooks.test": "127.0.0.1",
        "app.test": "127.0.0.1",
        "internal.example.com": "10.0.0.5",
    })
    previous = set_default_resolver(resolver)
    yield resolver
    set_default_resolver(previous)


class ExampleDomainsResolver(StaticResolver):
    """The static map, plus every other name under the documentation domains (example.com,
    .org, .net: RFC 2606) as one public address: verbs check media URLs at execution time
    (app/verbs/media_guard.py), and the test machine has no DNS."""

    PUBLIC = "93.184.215.14"
    DOMAINS = ("example.com", "example.org", "example.net")

    def resolve(self, host: str, port: int):  # noqa: ANN201 - StaticResolver's signature
        key = host.lower().rstrip(".")
        if key not in self._map and key.endswith(self.DOMAINS):
            self.add(key, self.PUBLIC)
        return super().resolve(host, port)


@pytest.fixture
def media_dns() -> Iterator[StaticResolver]:
    """Media hosts of the verb tests resolve (internal.example.com stays 10.0.0.5)."""
    resolver = ExampleDomainsResolver({"internal.example.com": "10.0.0.5",
                                       "metadata.example.com": "169.254.169.254"})
    previous = set_default_resolver(resolver)
    yield resolver
    set_default_resolver(previous)


# ---------------------------------------------------------------------------------------------
# HTTP(S)
# ---------------------------------------------------------------------------------------------
@dataclass
class Reply:
    status: int = 200
    body: bytes | Callable[[], Iterator[bytes]] = b"[]"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0          # seconds before the status line is written

    @classmethod
    def json(cls, value, status: int = 200) -> "Reply":
        return cls(status=status, body=json.dumps(value).encode())


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]     # lower-case names
    body: bytes
    at: float                   # time.monotonic() when the request arrived


_REASONS = {200: "OK", 204: "No Content", 302: "Found", 401: "Unauthorized",
            404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}


class _NoDelayWSGIServer(gevent.pywsgi.WSGIServer):
    """TCP_NODELAY on accepted sockets, as production web servers do; otherwise the chunked
    terminator waits on Nagle + the client's delayed ACK (~40 ms per request)."""

    def handle(self, sock, address):
        with contextlib.suppress(OSError):  # the client already went away: handle() sees that
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return super().handle(sock, address)

    def wrap_socket_and_handle(self, client_socket, address):
        try:
            return super().wrap_socket_and_handle(client_socket, address)
        except ssl.SSLError:   # a client rejecting our cert is what some tests want
            client_socket.close()


class _QuietTLSStreamServer(gevent.server.StreamServer):
    def wrap_socket_and_handle(self, client_socket, address):
        try:
            return super().wrap_socket_and_handle(client_socket, address)
        except ssl.SSLError:
            client_socket.close()


class HookServer:
    """Scripted WSGI app: pops one Reply per request (the last one repeats)."""

    def __init__(self, *, ssl_args: dict | None = None, listen: str = "127.0.0.1") -> None:
        self.script: list[Reply] = [Reply()]
        self.requests: list[Recorded] = []
        self.sni: list[str] = []   # HTTPS: server names clients asked for
        self._server = _NoDelayWSGIServer((listen, 0), self._app, log=None,
                                                error_log=None, **(ssl_args or {}))
        self.scheme = "https" if ssl_args else "http"

    def start(self) -> "HookServer":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(timeout=1)

    @property
    def port(self) -> int:
        return self._server.server_port

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def reply(self, *replies: Reply) -> None:
        self.script = list(replies)

    def _app(self, environ, start_response):
        body = environ["wsgi.input"].read()
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items()
                   if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = environ["CONTENT_TYPE"]
        self.requests.append(Recorded(environ["REQUEST_METHOD"], environ["PATH_INFO"],
                                      environ.get("QUERY_STRING", ""), headers, body,
                                      time.monotonic()))
        reply = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if reply.delay:
            gevent.sleep(reply.delay)  # scenario: a slow customer server
        start_response(f"{reply.status} {_REASONS.get(reply.status, 'X')}",
                       list(reply.headers.items()))
        if callable(reply.body):
            return reply.body()
        return [reply.body]


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    server = HookServer().start()
    yield server
    server.stop()


@dataclass
class IssuedCert:
    cert_file: str
    key_file: str

    def server_context(self, sni_seen: list) -> ssl.SSLContext:
        """Server-side TLS context that records the SNI name each client sent."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        context.sni_callback = lambda sslobj, name, ctx: sni_seen.append(name)
        return context


class LocalCA:
    """A throw-away certificate authority; ``ca_file`` is what the client is told to trust."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "SaaS-SBC test CA")])
        now = datetime.datetime.now(datetime.timezone.utc)
        self._name = name
        self.cert = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()),
                           critical=False)
            .sign(self._key, hashes.SHA256())
        )
        self.ca_file = str(directory / "ca.pem")
        Path(self.ca_file).write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, names: list[str]) -> IssuedCert:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        sans: list[x509.GeneralName] = []
        for name in names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(name)))
            except ValueError:
                sans.append(x509.DNSName(name))
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(self._name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        stem = names[0].replace("*", "wild").replace(":", "_")
        cert_file = self.dir / f"{stem}.crt"
        key_file = self.dir / f"{stem}.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return IssuedCert(str(cert_file), str(key_file))


@pytest.fixture(scope="session")
def tls_ca(tmp_path_factory) -> LocalCA:
    return LocalCA(tmp_path_factory.mktemp("tls"))


def _tls_servers(tls_ca: "LocalCA", server_class: Callable[..., Any]) -> Iterator[Callable[[list[str]], Any]]:
    """Factory fixture body: ``make(names)`` starts a TLS server with a cert for ``names``
    (recording the SNI names clients ask for); all are stopped at teardown."""
    started: list[Any] = []

    def make(names: list[str]) -> Any:
        issued = tls_ca.issue(names)
        sni: list[str] = []
        server = server_class(ssl_args={"ssl_context": issued.server_context(sni)}).start()
        server.sni = sni
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def https_hook_server(tls_ca) -> Iterator[Callable[[list[str]], HookServer]]:
    yield from _tls_servers(tls_ca, HookServer)


# ---------------------------------------------------------------------------------------------
# WebSocket (RFC 6455, server side, text frames only — what the call handler protocol needs)
# ---------------------------------------------------------------------------------------------
_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WsPeer:
    """One accepted connection, from the app's side."""

    def __init__(self, sock, handshake_headers: dict[str, str], path: str) -> None:
        self.sock = sock
        self.headers = handshake_headers
        self.path = path
        self.closed = False

    def send_json(self, value) -> None:
        self._send_frame(0x1, json.dumps(value).encode())

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([n])
        elif n < 65536:
            head += bytes([126]) + struct.pack("!H", n)
        else:
            head += bytes([127]) + struct.pack("!Q", n)
        self.sock.sendall(head + payload)

    def _recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("peer closed")
            data += chunk
        return data

    def recv_frame(self) -> tuple[int, bytes]:
        b1, b2 = self._recv_exact(2)
        opcode = b1 & 0x0F
        n = b2 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._recv_exact(8))[0]
        mask = self._recv_exact(4) if b2 & 0x80 else b"\0\0\0\0"
        data = bytes(c ^ mask[i % 4] for i, c in enumerate(self._recv_exact(n)))
        return opcode, data

    def drop(self) -> None:
        """Abrupt close (no close frame): what a crashed app or a network blip looks like."""
        self.closed = True
        with contextlib.suppress(OSError):  # the app already disconnected: nothing to shut
            self.sock.shutdown(2)
        self.sock.close()


class WsServer:
    """Accepts upgrades offering ``subprotocol``; records every message; ``on_message(peer, msg)``
    decides replies (default: ack every session:new / verb:hook with ``ack_data``)."""

    def __init__(self, subprotocol: str = "audio.saas-sbc.org", ssl_args: dict | None = None):
        self.subprotocol = subprotocol
        self.messages: list[dict] = []
        self.peers: list[WsPeer] = []
        self.sni: list[str] = []
        self.ack_data: list | None = [{"verb": "say", "text": "hello"}]
        self.on_message: Callable[[WsPeer, dict], None] = self._default_on_message
        self._server = _QuietTLSStreamServer(("127.0.0.1", 0), self._handle,
                                                  **(ssl_args or {}))
        self.scheme = "wss" if ssl_args else "ws"

    def start(self) -> "WsServer":
        self._server.start()
        return self

    def stop(self) -> None:
        for peer in self.peers:
            if not peer.closed:
                peer.drop()
        self._server.stop(timeout=1)

    def url(self, path: str = "/call", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self._server.server_port}{path}"

    def wait_for(self, predicate: Callable[[list[dict]], bool], timeout: float = 5.0) -> None:
        def holds() -> bool:
            assert predicate(self.messages), f"messages: {self.messages}"
            return True

        eventually(holds, timeout=timeout, interval=0.02, what="WebSocket messages condition")

    def _default_on_message(self, peer: WsPeer, message: dict) -> None:
        if message.get("type") in ("session:new", "verb:hook"):
            ack = {"type": "ack", "msgid": message["msgid"]}
            if self.ack_data is not None:
                ack["data"] = self.ack_data
            peer.send_json(ack)

    def _handle(self, sock, address) -> None:
        reader = sock.makefile("rb")
        request_line = reader.readline().decode("latin-1").strip()
        headers: dict[str, str] = {}
        while True:
            line = reader.readline().decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        offered = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",")]
        if headers.get("upgrade", "").lower() != "websocket" or self.subprotocol not in offered:
            sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            sock.close()
            return
        accept = base64.b64encode(hashlib.sha1(
            (headers["sec-websocket-key"] + _WS_GUID).encode()).digest()).decode()
        sock.sendall((
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {self.subprotocol}\r\n\r\n"
        ).encode())
        peer = WsPeer(sock, headers, request_line.split(" ")[1])
        self.peers.append(peer)
        try:
            # the app went away or sent a broken frame: this peer's session ends like a close
            with contextlib.suppress(ConnectionError, OSError, ValueError):
                while not peer.closed:
                    opcode, data = peer.recv_frame()
                    if opcode == 0x8:          # close: echo and stop
                        peer._send_frame(0x8, data[:2])
                        break
                    if opcode == 0x9:          # ping → pong
                        peer._send_frame(0xA, data)
                        continue
                    if opcode != 0x1:
                        continue
                    message = json.loads(data.decode())
                    self.messages.append(message)
                    self.on_message(peer, message)
        finally:
            peer.closed = True
            with contextlib.suppress(OSError):  # already dropped: nothing left to close
                sock.close()


@pytest.fixture
def ws_server() -> Iterator[WsServer]:
    server = WsServer().start()
    yield server
    server.stop()


@pytest.fixture
def wss_server(tls_ca) -> Iterator[Callable[[list[str]], WsServer]]:
    yield from _tls_servers(tls_ca, WsServer)
