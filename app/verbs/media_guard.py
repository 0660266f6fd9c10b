"""URLs FreeSWITCH fetches on a customer's behalf (``play.url``, gather's ``play.url`` prompt,
``listen.url``) are checked when the verb runs, with the same address policy as webhooks
(``app.webhooks.url_guard.guard``: resolve, refuse private, loopback, link-local, metadata and
other non-public addresses; loopback only in the SBC_ALLOW_LOOPBACK_WEBHOOKS development mode).

Saving an application checks its ``app_json``, but a webhook reply, a WebSocket command or an
actionHook reply arrives at call time and is never "saved", and DNS can change after a save:
without this check mod_http_cache or mod_audio_fork would fetch internal addresses from inside
the network. A refusal stops the application like any other application failure
(``app.voice.call_handlers``): the caller hears the fallback or the apology, the call record's
``webhook_error`` says ``media_url_refused:<class>`` and ``call.failed`` is published.

Limit: FreeSWITCH resolves the name again when it fetches, so a name that changes its answer
between the two lookups (DNS rebinding) is not covered; hosts are checked, not pinned.
"""
from __future__ import annotations

from app.errors import UnsafeUrl
from app.webhooks import url_guard

HTTP = url_guard.HTTP
WS = url_guard.WS
REASON_PREFIX = "media_url_refused"


class MediaUrlRefused(Exception):
    """A verb's media URL failed the address policy at execution time."""

    def __init__(self, verb: str, label: str) -> None:
        super().__init__(f"{verb}: media URL refused ({label})")
        self.verb = verb
        self.label = label

    @property
    def reason(self) -> str:
        """What the call record's ``webhook_error`` and ``call.failed`` carry."""
        return f"{REASON_PREFIX}:{self.label}"


def check_media_url(verb: str, url: str, *, kind: str = HTTP) -> None:
    """Raise ``MediaUrlRefused`` unless FreeSWITCH may fetch ``url`` for the caller's account."""
    try:
        url_guard.guard(url, kind=kind)
    except UnsafeUrl as exc:
        label = (exc.details or {}).get("reason", "unsafe_url") if isinstance(exc.details, dict) else "unsafe_url"
        raise MediaUrlRefused(verb, str(label)) from None
