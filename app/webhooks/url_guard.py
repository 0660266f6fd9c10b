"""SSRF guard for customer-supplied URLs (call_hook_url, actionHook, redirect, status hook, ws handlers).

Two moments, one rule set:

* on save (:func:`check_url_on_save`) the API refuses non-https URLs and hosts that resolve to
  non-public addresses, so the tenant gets a clear 422 at configuration time;
* at request time (:func:`guard`) the same check runs again, because DNS changes after saving
  and because actionHook/redirect URLs come from verb lists that are never "saved". The host is
  resolved ONCE here and the returned :class:`Destination` carries the checked address, which
  the transport connects to directly: there is no second lookup to rebind.

``allow_loopback`` (settings ``allow_loopback_webhooks``, env ``SBC_ALLOW_LOOPBACK_WEBHOOKS=1``)
is for local development and tests only. It admits loopback addresses (and plain http/ws to
them, since a local test server has no public certificate) and nothing else: private ranges,
link-local and metadata addresses stay refused.

Refusal messages name the address *class* (private, loopback, ...) but never the resolved
address itself, so the API cannot be used as an oracle for internal DNS.
"""
from __future__ import annotations

import contextlib
import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.errors import UnsafeUrl
from app.settings import get_settings
from app.webhooks import address_policy
from app.webhooks.address_policy import IPAddress
from app.webhooks.resolver import ResolutionFailed, Resolver, SystemResolver

HTTP = "http"
WS = "ws"

# kind → (secure scheme, its insecure counterpart allowed only to loopback in dev mode)
_SCHEMES = {HTTP: ("https", "http"), WS: ("wss", "ws")}
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

# Names that reach instance metadata without an address check (split-horizon DNS, hosts files).
METADATA_HOSTNAMES = frozenset({
    "metadata.google.internal", "metadata.goog", "metadata", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal",
})

_default_resolver: Resolver = SystemResolver()


def set_default_resolver(resolver: Resolver | None) -> Resolver:
    """Replace the process-wide resolver used when no explicit one is passed (None restores
    the system resolver); returns the previous one. For test suites without DNS (fixture
    ``webhook_dns``) and air-gapped labs with a static host map — never per request."""
    global _default_resolver
    previous = _default_resolver
    _default_resolver = resolver if resolver is not None else SystemResolver()
    return previous


@dataclass(frozen=True)
class Target:
    """A parsed, syntactically acceptable URL (not yet resolved)."""

    url: str
    scheme: str
    host: str        # ASCII (IDNA), lower case, no brackets, no trailing dot
    port: int
    target: str      # path + query, what goes on the request line

    @property
    def secure(self) -> bool:
        return self.scheme in ("https", "wss")

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port != _DEFAULT_PORTS[self.scheme]:
            host = f"{host}:{self.port}"
        return host


@dataclass(frozen=True)
class Destination(Target):
    """A target plus the one address that was checked; connect to ``ip`` and nowhere else."""

    ip: IPAddress = ipaddress.IPv4Address(0)


def _refuse(message: str, reason: str) -> UnsafeUrl:
    return UnsafeUrl(message, details={"reason": reason})


def _ascii_host(raw: str) -> str:
    host = raw.strip().lower().rstrip(".")
    with contextlib.suppress(ValueError):  # not an IP literal: a name, IDNA-encode it
        ipaddress.ip_address(host)
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise _refuse("URL host is not a valid host name", "invalid_host") from None


def parse_target(url: str, *, kind: str = HTTP) -> Target:
    """Syntax and scheme family only; raises UnsafeUrl with a human message."""
    if not isinstance(url, str) or not url or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        raise _refuse("URL must be a non-empty string without spaces or control characters",
                      "invalid_url")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    allowed = _SCHEMES[kind]
    if scheme not in allowed:
        raise _refuse(f"URL must start with {allowed[0]}://", "scheme")
    if parts.username is not None or parts.password is not None:
        raise _refuse("credentials in the URL are not allowed; use the basic auth fields",
                      "userinfo")
    if not parts.hostname:
        raise _refuse("URL has no host", "invalid_host")
    try:
        port = parts.port
    except ValueError:
        raise _refuse("URL port is not valid", "invalid_port") from None
    if port == 0:  # not "no port": ``or`` used to turn it into the scheme's default (443)
        raise _refuse("URL port is not valid (1-65535)", "invalid_port")
    if port is None:
        port = _DEFAULT_PORTS[scheme]
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return Target(url=url, scheme=scheme, host=_ascii_host(parts.hostname), port=port,
                  target=target)


def _allow_loopback(value: bool | None) -> bool:
    return get_settings().allow_loopback_webhooks if value is None else value


def resolve_public(host: str, *, port: int = 443, resolver: Resolver | None = None,
                   allow_loopback: bool | None = None) -> IPAddress:
    """Resolve ``host`` once and return the address to connect to, or raise UnsafeUrl.

    Every address the name maps to must be public: a name with one private record among
    public ones is refused, since which one a later client would pick is not ours to choose.
    """
    loopback_ok = _allow_loopback(allow_loopback)
    name = host.lower().rstrip(".").strip("[]")
    if name in METADATA_HOSTNAMES:
        raise _refuse("URL points to a cloud metadata service", address_policy.METADATA)
    try:
        addresses: list[IPAddress] = [ipaddress.ip_address(name)]
    except ValueError:
        try:
            addresses = (resolver or _default_resolver).resolve(name, port)
        except ResolutionFailed:
            raise _refuse("URL host does not resolve", "unresolvable") from None
        if not addresses:
            raise _refuse("URL host does not resolve", "unresolvable")
    for address in addresses:
        label = address_policy.refusal(address, allow_loopback=loopback_ok)
        if label is not None:
            raise _refuse(f"URL points to a non-public address ({label.replace('_', '-')})",
                          label)
    return addresses[0]


def guard(url: str, *, kind: str = HTTP, resolver: Resolver | None = None,
          allow_loopback: bool | None = None) -> Destination:
    """The request-time check: parse, resolve once, apply the address and scheme rules."""
    loopback_ok = _allow_loopback(allow_loopback)
    target = parse_target(url, kind=kind)
    ip = resolve_public(target.host, port=target.port, resolver=resolver,
                        allow_loopback=loopback_ok)
    # Plain http/ws only in the development mode, and only to loopback (no public cert there).
    if not target.secure and not (loopback_ok
                                  and address_policy.classify(ip) == address_policy.LOOPBACK):
        secure = _SCHEMES[kind][0]
        raise _refuse(f"URL must start with {secure}://", "scheme")
    return Destination(url=target.url, scheme=target.scheme, host=target.host,
                       port=target.port, target=target.target, ip=ip)


def check_url_on_save(url: str, *, allow_ws: bool = False, resolver: Resolver | None = None,
                      allow_loopback: bool | None = None) -> None:
    """Validate a URL a tenant is saving; raise :class:`app.errors.UnsafeUrl` (HTTP 422).

    ``allow_ws`` is for call handler URLs (``call_hook_url``), which may be ``wss://``;
    status hooks and everything else must be ``https://``.
    """
    scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    if allow_ws and scheme in _SCHEMES[WS]:
        guard(url, kind=WS, resolver=resolver, allow_loopback=allow_loopback)
        return
    if not allow_ws or scheme in _SCHEMES[HTTP]:
        guard(url, kind=HTTP, resolver=resolver, allow_loopback=allow_loopback)
        return
    raise _refuse("URL must start with https:// or wss://", "scheme")
