"""The one failure type a webhook caller has to handle.

Callers (the call session, verbs, the status hook) only need to know *that* the customer's
server gave no usable answer and why, to end the call or log it; ``reason`` is a stable code
from :class:`Reason`, never free text, so it can go on call records and metrics.
"""
from __future__ import annotations


class Reason:
    """Stable failure codes (kept as plain strings so they serialise anywhere)."""

    TIMEOUT = "timeout"                    # no complete reply within the per-attempt budget
    CONNECTION = "connection_error"        # refused, reset, unreachable
    TLS = "tls_error"                      # certificate or hostname verification failed
    HTTP_STATUS = "http_status"            # any non-2xx (redirects included: never followed)
    INVALID_JSON = "invalid_json"          # 2xx with a body that is not JSON
    TOO_LARGE = "response_too_large"       # body above WEBHOOK_MAX_RESPONSE_BYTES
    DNS = "dns_error"                      # the host did not resolve
    UNSAFE = "unsafe_destination"          # SSRF guard refused the URL or its address (not retried)
    PROTOCOL = "protocol_error"            # ws(s): handshake refused, bad frame, unexpected message
    CLOSED = "closed"                      # ws(s): handler gave up reconnecting or was closed


class WebhookFailed(Exception):
    """The customer's endpoint gave no usable reply after every attempt allowed."""

    def __init__(self, reason: str, attempts: int, last_status: int | None = None,
                 *, host: str | None = None, detail: str | None = None) -> None:
        self.reason = reason
        self.attempts = attempts
        self.last_status = last_status
        self.host = host
        self.detail = detail
        text = f"webhook to {host or '?'} failed: {reason} after {attempts} attempt(s)"
        if last_status is not None:
            text += f" (last status {last_status})"
        if detail:
            text += f": {detail}"
        super().__init__(text)
