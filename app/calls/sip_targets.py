"""Which ``sip:`` dial targets an account may reach (docs/api.md "SIP dial targets").

A ``sip:`` target makes FreeSWITCH send an INVITE straight to the URI's host: no carrier, no
least-cost routing, no gateway ACL. Left open it reached any host — loopback (the switch's own
services), private networks, metadata addresses. So it is refused by default, and allowed only
when both hold when the call dials:

1. the host is on the account's list (``sip_target_hosts``, managed by an admin of the
   account through ``/api/sip-targets``), compared exactly (a domain does not admit its
   subdomains, a name does not admit the addresses it resolves to);
2. the host passes the webhook address policy (``app.webhooks.url_guard.resolve_public``:
   public unicast only; loopback only in the SBC_ALLOW_LOOPBACK_WEBHOOKS development mode),
   checked again at dial time because DNS changes after a save.

Limit: FreeSWITCH resolves a name itself (NAPTR/SRV, then A/AAAA), so it may reach an address
this A/AAAA check never saw; list IP addresses where that matters.

The URI itself is parsed once (``parse_sip_uri``) into scheme, user, host, port and parameters,
and the dial string is built from those parts only, never from the text. mod_sofia reads more
than a SIP stack would from the text it is given: ``;fs_path=<url-encoded uri>`` becomes the
outbound proxy the INVITE is sent to (its code looks for it anywhere in the text, so a user part
``a;fs_path=…;x=y@host`` is refused too), and sofia-sip honours ``maddr`` and ``?headers``
(a Route); each of those would take the INVITE to a host the list never admitted. Measured on
FreeSWITCH 1.10.12 (tests/realswitch/test_sip_target_proxy.py): ``;fs_path=sip%3A<host>`` and
``;maddr=<host>`` after a listed host sent the INVITE to ``<host>``. So the grammar is narrow: a user of ``USER_CHARS`` (no ``;``,
``%`` escapes, ``?``), a host name, IPv4 or ``[IPv6]`` literal, an optional port, and only
the parameters of ``ALLOWED_PARAMETERS``; anything else is refused with the reason.
"""
from __future__ import annotations

import contextlib
import ipaddress
import re
import uuid
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import select

from app.db.engine import tenant_session
from app.errors import UnsafeUrl, ValidationFailed
from app.models import SipTargetHost
from app.settings import get_settings
from app.webhooks import address_policy, url_guard

# Dial target patterns (the dial verb's target schema, agent contacts): checked when saved.
PHONE_PATTERN = r"^\+?[0-9]{3,20}$"
USER_PATTERN = r"^[A-Za-z0-9_.+\-]{1,64}$"
# A sip: target (the shape; ``parse_sip_uri`` is the rule, with the reason of a refusal):
# [sip:|sips:]user@host[:port][;transport=udp|tcp|tls]. The user part is RFC 3261 unreserved
# characters without the quote and parentheses, and "*" for feature codes: no ";" (a user part
# may carry parameters mod_sofia reads), no "%" escapes (fs_path is url-decoded), no "?".
USER_CHARS = r"[A-Za-z0-9_.+*\-]{1,64}"
_HOSTNAME = (r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
             r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.?")
_IPV6_LITERAL = r"\[[0-9A-Fa-f:.]{2,45}\]"
# Parameters a sip: target may carry, with their values: ``transport`` only, because a PBX that
# listens on TCP or TLS cannot be reached without it; it chooses how the INVITE travels, never
# where. Everything else (maddr, fs_path and mod_sofia's other fs_* parameters, lr, user=,
# method=, ttl=, unknown names) is refused.
ALLOWED_PARAMETERS: dict[str, frozenset[str]] = {"transport": frozenset({"udp", "tcp", "tls"})}
SIP_PATTERN = (rf"^(?:sips?:)?{USER_CHARS}@(?:{_HOSTNAME}|{_IPV6_LITERAL})(?::[0-9]{{1,5}})?"
               r"(?:;transport=(?:udp|tcp|tls))?$")

SIP_PORT = 5060
NOT_LISTED = "sip_target_not_allowed"
REFUSED_PREFIX = "sip_target_refused"
INVALID_URI = "sip_target_invalid"  # not a URI this grammar admits (checked again when dialled)
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_RESERVED_NAMES = frozenset({"localhost", "localhost.localdomain"}) | url_guard.METADATA_HOSTNAMES


def normalize_host(raw: str) -> str:
    """The canonical form of a host as listed and compared: lower case, no trailing dot, IP
    literals without brackets in their compressed form. Raises ValueError when not a host."""
    host = raw.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    with contextlib.suppress(ValueError):  # not an IP literal: checked as a domain name below
        return str(ipaddress.ip_address(host))
    if not host or len(host) > 253 or not all(_LABEL.fullmatch(label) for label in host.split(".")):
        raise ValueError(f"{raw!r} is not a domain name or an IP address")
    return host


class InvalidSipUri(ValueError):
    """A ``sip:`` target outside the grammar above; ``str()`` says which part and why."""


@dataclass(frozen=True)
class SipUri:
    """A parsed ``sip:`` target: every part checked, the host normalized (``normalize_host``)."""

    scheme: str                      # "sip" or "sips"
    user: str
    host: str                        # lower case; an IPv6 address without brackets
    port: Optional[int] = None
    transport: Optional[str] = None  # one of ALLOWED_PARAMETERS["transport"]

    def dial_string(self) -> str:
        """``user@host[:port][;transport=…]`` for ``sofia/<profile>/``: made from the parts, so
        nothing of the original text but what was checked reaches mod_sofia. The scheme is
        left out as before (mod_sofia prefixes ``sip:``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = f":{self.port}" if self.port is not None else ""
        transport = f";transport={self.transport}" if self.transport else ""
        return f"{self.user}@{host}{port}{transport}"


_USER = re.compile(USER_CHARS)
_PORT = re.compile(r"[0-9]{1,5}")
_REFUSED_PARAMETERS = {
    "fs_path": "sets FreeSWITCH's outbound proxy",
    "maddr": "sends the request to another address",
}


def _check_parameters(params: list[str]) -> Optional[str]:
    """The transport of ``;name=value`` parameters, or InvalidSipUri naming the one refused."""
    transport = None
    for param in params:
        name, _, value = param.partition("=")
        lowered = name.lower()  # mod_sofia's strstr is case-sensitive, sofia-sip's maddr is not
        if lowered in _REFUSED_PARAMETERS or lowered.startswith("fs_"):
            why = _REFUSED_PARAMETERS.get(lowered, "is a FreeSWITCH dial parameter")
            raise InvalidSipUri(f"The URI parameter '{lowered}' is not allowed: it {why}.")
        allowed = ALLOWED_PARAMETERS.get(name)  # written in lower case, as SIP_PATTERN says
        if allowed is None:
            raise InvalidSipUri(f"The URI parameter '{name}' is not allowed (only "
                                f"{_allowed_text()}).")
        if value not in allowed:
            raise InvalidSipUri(f"The URI parameter {name}={value} is not allowed (only "
                                f"{_allowed_text()}).")
        if transport is not None:
            raise InvalidSipUri(f"The URI parameter '{name}' is given twice.")
        transport = value
    return transport


def _allowed_text() -> str:
    return ", ".join(f"{name}={'|'.join(sorted(values))}" for name, values in ALLOWED_PARAMETERS.items())


def _host_and_port(hostport: str) -> tuple[str, Optional[int]]:
    if hostport.startswith("["):
        end = hostport.find("]")
        literal, rest = (hostport[1:end], hostport[end + 1:]) if end > 0 else ("", "")
        try:
            if "%" in literal:  # a zone id names an interface of the switch, not a host
                raise ValueError(literal)
            host = str(ipaddress.IPv6Address(literal))
        except ValueError:
            raise InvalidSipUri(f"{hostport!r} is not an [IPv6] address.") from None
    elif hostport.count(":") > 1:
        raise InvalidSipUri("An IPv6 address is written in brackets: [2001:db8::1].")
    else:
        name, sep, port_text = hostport.partition(":")
        rest = sep + port_text
        if name.endswith(".."):
            raise InvalidSipUri(f"{name!r} is not a host name or an IP address.")
        try:
            host = normalize_host(name)
        except ValueError:
            raise InvalidSipUri(f"{name!r} is not a host name or an IP address.") from None
        labels = host.split(".")
        if all(label.isdigit() for label in labels) and not _is_ipv4(host):
            raise InvalidSipUri(f"{name!r} is not an IPv4 address.")
    if not rest:
        return host, None
    if not rest.startswith(":") or not _PORT.fullmatch(rest[1:]) or not 1 <= int(rest[1:]) <= 65535:
        raise InvalidSipUri(f"{rest!r} is not a port (1-65535).")
    return host, int(rest[1:])


def _is_ipv4(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv4Address)
    except ValueError:
        return False


def parse_sip_uri(text: str, *, scheme_required: bool = False) -> SipUri:
    """``[sip:|sips:]user@host[:port][;transport=udp|tcp|tls]`` → its parts, or InvalidSipUri
    saying what is refused: headers (``?``), ``maddr``/``fs_path``/any parameter but
    ``transport``, parameters or escapes in the user part, a host that is not a name, IPv4 or
    ``[IPv6]`` literal, a port outside 1-65535. ``scheme_required``: no bare ``user@host``."""
    if not isinstance(text, str) or not text.isascii() or not text.isprintable() or " " in text:
        raise InvalidSipUri("A SIP URI is printable ASCII without spaces.")
    scheme, sep, rest = text.partition(":")
    if not (sep and scheme in ("sip", "sips")):
        if scheme_required:
            raise InvalidSipUri("A SIP URI starts with sip: or sips:.")
        scheme, rest = "sip", text
    if "?" in rest:
        raise InvalidSipUri("URI headers ('?…') are not allowed.")
    if rest.count("@") != 1:
        raise InvalidSipUri("A SIP URI is user@host: exactly one '@'.")
    user, hostpart = rest.split("@")
    if ";" in user:
        _check_parameters(user.split(";")[1:])  # names fs_path/maddr when that is what it is
        raise InvalidSipUri("Parameters in the user part are not allowed.")
    if "%" in user:
        raise InvalidSipUri("Escaped characters ('%') in the user part are not allowed.")
    if not _USER.fullmatch(user):
        raise InvalidSipUri("The user part is 1-64 letters, digits, '_', '.', '+', '-' or '*'.")
    hostport, *params = hostpart.split(";")
    transport = _check_parameters(params)
    host, port = _host_and_port(hostport)
    return SipUri(scheme=scheme, user=user, host=host, port=port, transport=transport)


def uri_host(uri: str) -> str | None:
    """Host of a dial target, normalized; None if it is not a URI ``parse_sip_uri`` admits."""
    try:
        return parse_sip_uri(uri).host
    except InvalidSipUri:
        return None


def check_host_on_save(raw: str) -> str:
    """The normalized host an admin may list, or 422: not a host, a reserved name, or a host
    whose addresses the address policy refuses (``unsafe_url``, as for webhook URLs)."""
    try:
        host = normalize_host(raw)
    except ValueError as exc:
        raise ValidationFailed(str(exc), code="invalid_sip_host") from None
    if host in _RESERVED_NAMES:
        raise UnsafeUrl("This host name is reserved (loopback or cloud metadata).",
                        details={"reason": address_policy.METADATA if host != "localhost" else address_policy.LOOPBACK})
    url_guard.resolve_public(host, port=SIP_PORT)
    return host


def refusal(account_id: uuid.UUID | str, uri: str) -> str | None:
    """None when the account may dial ``uri`` now; else why not (``sip_target_invalid``: not a
    URI ``parse_sip_uri`` admits; ``sip_target_not_allowed``; ``sip_target_refused:<address
    class>``), for the dial outcome."""
    host = uri_host(uri)
    if host is None:  # saved before the grammar was narrowed, or never validated: not dialled
        return INVALID_URI
    with tenant_session(uuid.UUID(str(account_id))) as db:
        listed = db.scalar(select(SipTargetHost.id).where(SipTargetHost.host == host)) is not None
    if not listed:
        return NOT_LISTED
    try:
        url_guard.resolve_public(host, port=SIP_PORT,
                                 allow_loopback=get_settings().allow_loopback_webhooks)
    except UnsafeUrl as exc:
        label = exc.details.get("reason", "unsafe") if isinstance(exc.details, dict) else "unsafe"
        return f"{REFUSED_PREFIX}:{label}"
    return None
