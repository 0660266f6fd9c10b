"""Trying a webhook: what a call would do with the developer's webhook, before any phone rings.

Shared by ``sbc webhook try`` (app/cli/webhook.py) and the console's **Try it**
(``POST /api/applications/:id/try``), so both show the same thing. It sends the exact first request of a call (``app.webhooks.first_request``, signed like the
platform signs it, through the same client and SSRF guard), validates the reply with the
controller's own parser (``app.verbs.parse_verb_list``) and describes each verb in the order
the call would run it. Describers are an explicit table keyed by verb name; a verb without one
is described by its fields, so a new verb is never silently hidden.
"""
from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from app.verbs import VerbListRejected, parse_verb_list
from app.verbs.base import Verb
from app.verbs.errors import format_error
from app.verbs.tts import DEFAULT_VOICE, FLITE_VOICES, VOICE_ALIASES
from app.webhooks.client import BasicAuth, WebhookClient
from app.webhooks.errors import WebhookFailed
from app.webhooks.first_request import first_request_body

TEST_ACCOUNT_SID = "00000000-0000-4000-8000-000000000001"
TEST_APPLICATION_SID = "00000000-0000-4000-8000-000000000002"


def test_request_body(*, from_number: str, to_number: str, direction: str,
                      account_sid: str = TEST_ACCOUNT_SID,
                      application_sid: str = TEST_APPLICATION_SID) -> dict[str, Any]:
    """The first request of a call with a fresh test ``callId``/``traceId``."""
    return first_request_body(call_id=str(uuid.uuid4()), trace_id=str(uuid.uuid4()),
                              account_id=account_sid, application_id=application_sid,
                              from_number=from_number, to_number=to_number, direction=direction)


LOOPBACK_HINT = ("this is a loopback address: for local development run sbc (this command, the API "
                 "and the controller) with SBC_ALLOW_LOOPBACK_WEBHOOKS=1, which also admits plain "
                 "http:// to loopback; never in production")


def failure_line(reason: str, attempts: int, detail: Optional[str], last_status: Optional[int] = None) -> str:
    """One line per failure: the reason code once, the guard's or client's detail once."""
    text = f"failed: {reason}"
    if detail:
        text += f" ({detail})"
    if last_status is not None:
        text += f", last status {last_status}"
    if attempts:
        text += f" after {attempts} attempt(s)"
    return text + " — the caller would hear the apology (or the app_json fallback)"


def failure_hint(reason: str, detail: Optional[str], url: str) -> Optional[str]:
    """What to do about it, when there is a known remedy (the loopback development mode)."""
    from urllib.parse import urlsplit

    from app.webhooks.errors import Reason

    if reason != Reason.UNSAFE:
        return None
    host = (urlsplit(url).hostname or "").lower()
    if "loopback" in (detail or "") or host in ("localhost", "127.0.0.1", "::1") or host.startswith("127."):
        return LOOPBACK_HINT
    return None


def _voice(params: dict[str, Any]) -> str:
    asked = params.get("voice")
    if not asked:
        return f"the application's voice ({DEFAULT_VOICE} if it is not a flite voice)"
    if asked in FLITE_VOICES:
        return asked
    if asked.lower() in VOICE_ALIASES:
        return VOICE_ALIASES[asked.lower()]
    return f"the application's voice (no flite voice {asked!r}: a warning goes in the journey)"


def _say(p: dict[str, Any]) -> str:
    times = f" {p['loop']} times" if p.get("loop", 1) > 1 else ""
    return f"speak {p['text']!r}{times} with voice {_voice(p)}"


def _targets(p: dict[str, Any]) -> str:
    return ", ".join(f"{t.get('type')}:{t.get('name') or t.get('number') or t.get('uri') or '?'}"
                     for t in p.get("target") or [])


def _gather(p: dict[str, Any]) -> str:
    prompt = ""
    if p.get("say"):
        prompt = f" while speaking {p['say']['text']!r}"
    elif p.get("play"):
        prompt = f" while playing {p['play']['url']}"
    hook = f", then POST the result to {p['actionHook']}" if p.get("actionHook") else \
        ", then go on with the next verb"
    return f"collect {'/'.join(p.get('input') or ['dtmf'])}{prompt}{hook}"


DESCRIBERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "say": _say,
    "play": lambda p: f"play {p['url']}" + (f" {p['loop']} times" if p.get("loop", 1) > 1 else ""),
    "gather": _gather,
    "dial": lambda p: f"dial {_targets(p)} (the call continues with the dial's outcome)",
    "queue": lambda p: f"wait in queue {p.get('name')!r} for an agent",
    "conference": lambda p: f"join conference {p.get('name')!r}",
    "pause": lambda p: f"pause {p.get('length')} s",
    "hangup": lambda p: "hang up" + (f" (reason {p['reason']!r})" if p.get("reason") else ""),
    "redirect": lambda p: f"POST to {p.get('actionHook')} and run its reply instead of the rest",
    "tag": lambda p: f"tag the call with {p.get('data')}",
    "record": lambda p: "record the call" + (f", then POST to {p['actionHook']}" if p.get("actionHook") else ""),
    "listen": lambda p: f"stream the call's audio to {p.get('url')}",
}


def describe(verb: Verb) -> str:
    describer = DESCRIBERS.get(verb.name)
    if describer is not None:
        with contextlib.suppress(KeyError, TypeError):  # a describer must never hide a verb
            return f"{verb.name}: {describer(verb.params)}"
    shown = {k: v for k, v in verb.params.items() if k != "verb" and v not in (None, [], {})}
    return f"{verb.name}: {shown}"


@dataclass
class Verdict:
    accepted: bool
    steps: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def judge(reply: Optional[Any]) -> Verdict:
    """What the call would do with ``reply`` (None: an empty body, the call ends unanswered)."""
    if reply is None:
        return Verdict(True, ["(empty reply: no instructions, the call ends unanswered)"])
    try:
        verbs = parse_verb_list(reply)
    except VerbListRejected as exc:
        return Verdict(False, errors=[format_error(e) for e in exc.errors])
    steps = [describe(v) for v in verbs]
    if not verbs or verbs[-1].name not in ("hangup", "redirect", "dial", "queue", "conference"):
        steps.append("(end of the list: the call hangs up)")
    return Verdict(True, steps, warnings=[format_error(w) for w in verbs.warnings])


@dataclass
class Trial:
    """One try: the request sent, then either the failure or the reply's verdict."""
    method: str
    url: str
    body: dict[str, Any]
    signed: bool
    elapsed_ms: Optional[float] = None
    reply: Any = None
    verdict: Verdict = field(default_factory=lambda: Verdict(False))  # judged once a reply came
    failure: Optional[WebhookFailed] = None

    @property
    def outcome(self) -> str:
        """``failed`` (no usable reply), ``rejected`` (the reply would not run) or ``accepted``."""
        if self.failure is not None:
            return "failed"
        return "accepted" if self.verdict.accepted else "rejected"


def try_hook(url: str, method: str, body: dict[str, Any], *, secret: Optional[str] = None,
             basic_auth: Optional[BasicAuth] = None) -> Trial:
    """Send ``body`` once through the platform's webhook client (its SSRF guard checks the URL
    and every address at use) and judge the reply. Never raises for the endpoint's failures."""
    trial = Trial(method=method, url=url, body=body, signed=bool(secret))
    client = WebhookClient(attempts=1)
    started = time.monotonic()
    try:
        trial.reply = client.fetch_instructions(url, method, body, secret=secret, basic_auth=basic_auth)
    except WebhookFailed as exc:
        trial.failure = exc
        return trial
    finally:
        client.close()
    trial.elapsed_ms = (time.monotonic() - started) * 1000
    trial.verdict = judge(trial.reply)
    return trial
