"""The webhook client: ask the customer's server what a call should do, and post status updates.

Policy (SPEC "Outbound webhook", "Signature", "Errors"; numbers from app/limits.py):

* the body dict is serialised ONCE to compact UTF-8 JSON; those exact bytes are signed
  (``X-Signature``) and sent;
* ``GET`` (``call_hook_method``) carries the same fields as query parameters (scalars as text,
  booleans ``true``/``false``, null as empty, objects/arrays as compact JSON) and the signature
  covers the exact query string bytes sent (the part after ``?`` that we appended);
* each attempt has a total budget (10 s); 3 attempts, 0.5 s then 1 s apart;
* failures that are retried: timeout, connection/TLS error, any non-2xx (3xx included:
  redirects are never followed), a 2xx body that is not JSON (a maintenance page served with
  200 is as transient as a 503), a body larger than the cap;
* not retried: the SSRF guard refusing the URL or its address (deterministic);
* an empty (or whitespace-only) 2xx body returns ``None``: "no instructions", the caller ends
  the call. Any JSON value is returned as parsed; the caller validates it (all or nothing)
  with ``app.verbs.parse_verb_list``.

Every attempt is logged with host, status and elapsed time, never the path, query, body,
secret or credentials.
"""
from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlencode, urljoin

import gevent

from app.errors import UnsafeUrl
from app.limits import (
    WEBHOOK_ATTEMPTS,
    WEBHOOK_MAX_RESPONSE_BYTES,
    WEBHOOK_RETRY_DELAYS_SECONDS,
    WEBHOOK_TIMEOUT_SECONDS,
    WEBHOOK_USER_AGENT,
)
from app.ops.metrics import WEBHOOK_ATTEMPT_SECONDS, WEBHOOK_OUTCOMES
from app.webhooks import url_guard
from app.webhooks.errors import Reason, WebhookFailed
from app.webhooks.resolver import Resolver
from app.webhooks.signing import SIGNATURE_HEADER, sign
from app.webhooks.transport import AttemptError, PinnedTransport

log = logging.getLogger("app.webhooks")

BasicAuth = tuple[str, str]
METHODS = ("POST", "GET")


def serialise(body: Mapping[str, Any]) -> bytes:
    """The one serialisation: compact, key order kept, UTF-8 (not \\u-escaped)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _query_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def query_string(body: Mapping[str, Any]) -> str:
    """How a GET webhook carries the body fields."""
    return urlencode([(str(k), _query_value(v)) for k, v in body.items()])


def resolve_hook_url(base_url: str, hook: str) -> str:
    """actionHook/redirect may be relative to the application's call_hook_url (as in jambonz);
    the result still goes through the guard when it is requested."""
    return urljoin(base_url, hook)


class WebhookClient:
    """Thread/greenlet-safe; keep one per process (it holds keep-alive pools)."""

    def __init__(self, *, resolver: Resolver | None = None, allow_loopback: bool | None = None,
                 ca_bundle: str | None = None, timeout: float = WEBHOOK_TIMEOUT_SECONDS,
                 attempts: int = WEBHOOK_ATTEMPTS,
                 retry_delays: Sequence[float] = WEBHOOK_RETRY_DELAYS_SECONDS,
                 max_response_bytes: int = WEBHOOK_MAX_RESPONSE_BYTES,
                 transport: PinnedTransport | None = None,
                 sleep: Callable[[float], None] = gevent.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``sleep`` and ``clock`` are injectable so a test can prove the deadline arithmetic
        (each attempt's timeout, which retry starts) on a clock it moves itself."""
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self._resolver = resolver
        self._allow_loopback = allow_loopback
        self._timeout = timeout
        self._attempts = attempts
        self._delays = tuple(retry_delays) or (0.0,)
        self._max_bytes = max_response_bytes
        self._transport = transport or PinnedTransport(ca_bundle=ca_bundle)
        self._sleep = sleep
        self._clock = clock

    # -- public API --------------------------------------------------------------------------
    def fetch_instructions(self, url: str, method: str = "POST",
                           body: Mapping[str, Any] | None = None, *,
                           secret: str | bytes | None = None,
                           basic_auth: BasicAuth | None = None,
                           deadline_seconds: float | None = None) -> Any | None:
        """Return the parsed JSON reply (normally a verb list), or None for an empty body.

        ``deadline_seconds`` bounds all attempts together (a caller is waiting in silence):
        an attempt gets what is left of it, and no retry starts once it has passed.
        Raises :class:`WebhookFailed` when no attempt produced a 2xx JSON/empty reply.
        """
        return self._exchange(url, method, body or {}, secret, basic_auth, parse=True,
                              purpose="hook", deadline_seconds=deadline_seconds)

    def post_status(self, url: str, body: Mapping[str, Any], *, secret: str | bytes | None = None,
                    basic_auth: BasicAuth | None = None) -> None:
        """POST a call-status update; the reply body is ignored, only 2xx counts.

        Blocks for up to the full retry budget: the call path sends it from its own greenlet
        (``app.calls.status_hook.send_status``)."""
        self._exchange(url, "POST", body, secret, basic_auth, parse=False, purpose="status")

    def close(self) -> None:
        self._transport.close()

    # -- internals ---------------------------------------------------------------------------
    def _build(self, dest: url_guard.Destination, method: str, body: Mapping[str, Any],
               secret: str | bytes | None, basic_auth: BasicAuth | None
               ) -> tuple[str, dict[str, str], bytes | None]:
        headers = {
            "Host": dest.host_header,
            "User-Agent": WEBHOOK_USER_AGENT,
            "Accept": "application/json",
            "Accept-Encoding": "identity",   # the size cap counts the bytes we parse
        }
        if method == "GET":
            query = query_string(body)
            target = dest.target
            if query:
                target += ("&" if "?" in target else "?") + query
            payload = None
            signed = query.encode("ascii")
        else:
            target = dest.target
            payload = serialise(body)
            signed = payload
            headers["Content-Type"] = "application/json"
        if secret:
            headers[SIGNATURE_HEADER] = sign(signed, secret)
        if basic_auth:
            user, password = basic_auth
            token = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
        return target, headers, payload

    def _exchange(self, url: str, method: str, body: Mapping[str, Any],
                  secret: str | bytes | None, basic_auth: BasicAuth | None, *, parse: bool,
                  purpose: str, deadline_seconds: float | None = None) -> Any | None:
        method = (method or "POST").upper()
        if method not in METHODS:
            raise ValueError(f"unsupported webhook method {method!r}")
        try:
            host = url_guard.parse_target(url).host
        except UnsafeUrl as exc:
            raise WebhookFailed(Reason.UNSAFE, 0, host=None, detail=exc.message) from exc

        dest: url_guard.Destination | None = None
        request: tuple[str, dict[str, str], bytes | None] | None = None
        last: AttemptError | None = None
        ends = None if deadline_seconds is None else self._clock() + deadline_seconds
        attempts = 0
        for attempt in range(1, self._attempts + 1):
            timeout = self._timeout
            if attempt > 1:
                delay = self._delays[min(attempt - 2, len(self._delays) - 1)]
                if ends is not None and self._clock() + delay >= ends:
                    break  # out of time: no attempt could finish
                self._sleep(delay)
            if ends is not None:
                timeout = min(timeout, ends - self._clock())
                if timeout <= 0:
                    break
            attempts = attempt
            started = time.monotonic()
            try:
                if dest is None:   # resolve once; every later attempt reuses the checked address
                    dest = self._guard(url)
                    request = self._build(dest, method, body, secret, basic_auth)
                target, headers, payload = request  # type: ignore[misc]
                raw = self._transport.request(dest, method, target, headers, payload,
                                              timeout=timeout, max_bytes=self._max_bytes)
                if not 200 <= raw.status < 300:
                    raise AttemptError(Reason.HTTP_STATUS, raw.status)
                result = self._parse(raw.body, raw.status) if parse else None
            except AttemptError as exc:
                last = exc
                self._log(purpose, attempt, host, exc.status, started, exc.reason)
                continue
            except UnsafeUrl as exc:
                self._log(purpose, attempt, host, None, started, Reason.UNSAFE)
                raise WebhookFailed(Reason.UNSAFE, 0, host=host, detail=exc.message) from exc
            self._log(purpose, attempt, host, raw.status, started, "ok")
            return result
        if last is None:  # a deadline too short for even one attempt
            raise WebhookFailed(Reason.TIMEOUT, 0, host=host, detail="no time left for an attempt")
        raise WebhookFailed(last.reason, attempts, last.status, host=host,
                            detail=last.detail or None)

    def _guard(self, url: str) -> url_guard.Destination:
        try:
            return url_guard.guard(url, resolver=self._resolver,
                                   allow_loopback=self._allow_loopback)
        except UnsafeUrl as exc:
            if (exc.details or {}).get("reason") == "unresolvable":
                raise AttemptError(Reason.DNS, None, "host does not resolve") from None
            raise

    @staticmethod
    def _parse(body: bytes, status: int) -> Any | None:
        if not body.strip():
            return None
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise AttemptError(Reason.INVALID_JSON, status, "reply is not JSON") from None

    @staticmethod
    def _log(purpose: str, attempt: int, host: str, status: int | None, started: float,
             outcome: str) -> None:
        elapsed = time.monotonic() - started
        WEBHOOK_ATTEMPT_SECONDS.labels(purpose).observe(elapsed)
        WEBHOOK_OUTCOMES.labels(purpose, outcome).inc()
        log.info("webhook %s attempt=%d host=%s status=%s elapsed_ms=%.1f outcome=%s",
                 purpose, attempt, host, status if status is not None else "-",
                 elapsed * 1000.0, outcome)


_shared: WebhookClient | None = None
_shared_lock = threading.Lock()


def get_client() -> WebhookClient:
    """The process-wide client (system resolver, settings' loopback flag, system CAs), so every
    call shares the keep-alive pools. Tests build their own ``WebhookClient`` instead."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WebhookClient()
        return _shared
