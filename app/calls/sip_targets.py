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
"""
from __future__ import annotations

import contextlib
import ipaddress
import re
import uuid

from sqlalchemy import select

from app.db.engine import tenant_session
from app.errors import UnsafeUrl, ValidationFailed
from app.models import SipTargetHost
from app.settings import get_settings
from app.webhooks import address_policy, url_guard

# Dial target patterns (the dial verb's target schema, agent contacts): checked when saved.
PHONE_PATTERN = r"^\+?[0-9]{3,20}$"
USER_PATTERN = r"^[A-Za-z0-9_.+\-]{1,64}$"
SIP_PATTERN = r"^(sips?:)?[A-Za-z0-9_.+\-!~*()&=$;?%]+@[A-Za-z0-9.\-\[\]:]+(;[A-Za-z0-9_.=\-]+)*$"

SIP_PORT = 5060
NOT_LISTED = "sip_target_not_allowed"
REFUSED_PREFIX = "sip_target_refused"
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


def uri_host(uri: str) -> str | None:
    """Host of a dial target ``[sip:|sips:]user@host[:port][;params]``, normalized; None if
    it has none."""
    rest = uri.split(":", 1)[1] if uri.lower().startswith(("sip:", "sips:")) else uri
    if "@" not in rest:
        return None
    hostport = rest.rsplit("@", 1)[1].split(";", 1)[0]
    if hostport.startswith("["):
        host = hostport[1:hostport.find("]")] if "]" in hostport else ""
    else:
        host = hostport.split(":", 1)[0]
    try:
        return normalize_host(host)
    except ValueError:
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
    """None when the account may dial ``uri`` now; else why not (``sip_target_not_allowed``,
    ``sip_target_refused:<address class>``), for the dial outcome."""
    host = uri_host(uri)
    if host is None:
        return NOT_LISTED
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
