"""HTTP to a tenant's identity provider: discovery, the token request, the JWKS.

The issuer URL is a customer's input contacted from inside our network, so every URL (the issuer's
discovery document and each endpoint it names) goes through ``app.webhooks.url_guard.guard`` at
the moment of use — not only when the admin saved it, since DNS changes — and the request goes to
the one address the guard checked (``PinnedTransport``: no second lookup, no redirects, no
environment proxies, bounded time and size). Loopback is admitted only with
``SBC_ALLOW_LOOPBACK_SSO=1`` (development and tests: the suite's provider listens on 127.0.0.1),
which, like the webhooks' setting, also admits plain http to loopback and nothing else.

Nothing is cached: a sign-in is rare next to a call, and reading the JWKS each time follows the
provider's key rotation without a cache-invalidation rule (three requests per sign-in; figure in
docs/sso.md).
"""
from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

from app import limits
from app.accounts.sso.errors import SsoProviderUnavailable
from app.errors import UnsafeUrl
from app.settings import get_settings
from app.webhooks import url_guard
from app.webhooks.transport import AttemptError, PinnedTransport

log = logging.getLogger(__name__)

DISCOVERY_PATH = "/.well-known/openid-configuration"
_transport = PinnedTransport(max_pools=8, connections_per_pool=2)


@dataclass(frozen=True)
class ProviderMetadata:
    """What the flow needs from the discovery document (OpenID Connect Discovery 1.0 §3)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


def _destination(url: str, what: str) -> url_guard.Destination:
    try:
        return url_guard.guard(url, allow_loopback=get_settings().allow_loopback_sso)
    except UnsafeUrl as exc:
        reason = (exc.details or {}).get("reason", "unsafe_url")
        raise SsoProviderUnavailable(
            f"The identity provider's {what} URL is refused: {exc.message}.",
            details={"reason": "unsafe_url", "url_reason": reason, "endpoint": what}) from None


def _exchange(url: str, what: str, method: str, headers: dict[str, str], body: bytes | None) -> Any:
    dest = _destination(url, what)
    try:
        raw = _transport.request(dest, method, dest.target, {"Host": dest.host_header, **headers}, body,
                                 timeout=limits.SSO_HTTP_TIMEOUT_SECONDS, max_bytes=limits.SSO_HTTP_MAX_BYTES)
    except AttemptError as exc:
        log.warning("identity provider %s unreachable at %s: %s", what, dest.host, exc.reason)
        raise SsoProviderUnavailable(f"The identity provider's {what} could not be reached.",
                                     details={"reason": exc.reason, "endpoint": what}) from None
    try:
        parsed = json.loads(raw.body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise SsoProviderUnavailable(f"The identity provider's {what} did not answer JSON.",
                                     details={"reason": "not_json", "endpoint": what, "status": raw.status})
    if raw.status != 200:
        # OAuth 2.0 error bodies ({"error": "invalid_grant"}) are safe to show: no secret in them
        error = parsed.get("error") if isinstance(parsed.get("error"), str) else None
        raise SsoProviderUnavailable(f"The identity provider's {what} answered {raw.status}.",
                                     details={"reason": "status", "endpoint": what, "status": raw.status,
                                              "error": (error or "")[:100]})
    return parsed


def _get_json(url: str, what: str) -> dict[str, Any]:
    return _exchange(url, what, "GET", {"Accept": "application/json"}, None)


def discover(issuer: str) -> ProviderMetadata:
    """The provider's endpoints; its ``issuer`` must be exactly the configured one (Discovery
    §4.3: otherwise a document could speak for another issuer)."""
    doc = _get_json(issuer.rstrip("/") + DISCOVERY_PATH, "discovery")
    fields = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
    if not all(isinstance(doc.get(name), str) and doc[name] for name in fields):
        raise SsoProviderUnavailable("The identity provider's discovery document lacks an endpoint.",
                                     details={"reason": "bad_discovery", "endpoint": "discovery"})
    if doc["issuer"] != issuer:
        raise SsoProviderUnavailable("The discovery document names another issuer than the configured one.",
                                     details={"reason": "issuer_mismatch", "endpoint": "discovery"})
    metadata = ProviderMetadata(*(doc[name] for name in fields))
    _destination(metadata.authorization_endpoint, "authorization")  # the browser goes there: same rules
    return metadata


def authorization_url(metadata: ProviderMetadata, params: dict[str, str]) -> str:
    joiner = "&" if "?" in metadata.authorization_endpoint else "?"
    return metadata.authorization_endpoint + joiner + urlencode(params, quote_via=quote)


def redeem_code(metadata: ProviderMetadata, *, client_id: str, client_secret: str, code: str,
                redirect_uri: str, code_verifier: str) -> dict[str, Any]:
    """The token request (RFC 6749 §4.1.3 with RFC 7636's verifier), client_secret_basic."""
    # RFC 6749 §2.3.1: each part form-urlencoded before base64
    credentials = f"{quote_plus(client_id)}:{quote_plus(client_secret)}".encode()
    body = urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                      "code_verifier": code_verifier}).encode()
    headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded",
               "Authorization": "Basic " + base64.b64encode(credentials).decode("ascii")}
    return _exchange(metadata.token_endpoint, "token", "POST", headers, body)


def key_set(metadata: ProviderMetadata) -> dict[str, Any]:
    return _get_json(metadata.jwks_uri, "jwks")
