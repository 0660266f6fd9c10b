"""What drives a call: the flow engine, the customer's webhook or WebSocket, or ``app_json``.

Precedence (SPEC "Application", decided where the spec is silent):
1. ``call_flow_sid`` set → the flow engine runs, nothing else;
2. ``call_hook_url`` set → the webhook (http/https) or WebSocket (ws/wss) handler drives;
   ``app_json``, when also set, is the fallback played if the handler fails (no usable reply
   after every attempt, or a rejected reply) — so an app owner can ship a "we'll be right
   back" script that survives an outage of their server;
3. else ``app_json``.
When the application fails and has no fallback the caller hears ``APOLOGY`` and the call
ends — never dead air. The failure is kept on the call record (``webhook_error``) and
published as ``call.failed``.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from app.calls.route import AppSettings
from app.flows.definition import validate_flow
from app.flows.runner import FlowRunner
from app.verbs import VerbListRejected, VerbOutcome, parse_verb_list, run_verbs
from app.verbs.context import VerbContext
from app.verbs.media_guard import MediaUrlRefused
from app.verbs.registry import PLATFORM_REGISTRY, REGISTRY
from app.webhooks.errors import WebhookFailed

log = logging.getLogger(__name__)

APOLOGY = "We are sorry, this call cannot be completed right now. Goodbye."

HANDLER_FLOW = "flow"
HANDLER_WEBHOOK = "webhook"
HANDLER_WEBSOCKET = "websocket"
HANDLER_APP_JSON = "app_json"


def handler_kind(app: AppSettings) -> Optional[str]:
    if app.call_flow_sid and app.flow_definition is not None:
        return HANDLER_FLOW
    if app.call_hook_url:
        return HANDLER_WEBSOCKET if re.match(r"wss?://", app.call_hook_url) else HANDLER_WEBHOOK
    if app.app_json:
        return HANDLER_APP_JSON
    return None


def digits(value: Optional[str]) -> str:
    return re.sub(r"\D", "", value or "")


@dataclass
class HandlerResult:
    outcome: VerbOutcome
    error: Optional[str] = None   # why the application failed (webhook_error on the record)


# The first-request client: (url, method, body) → parsed JSON reply or None (empty body).
FetchFirst = Callable[[str, str, dict[str, Any]], Any]


def run_application(ctx: VerbContext, app: AppSettings, kind: str, first_body: dict[str, Any],
                    fetch_first: FetchFirst) -> HandlerResult:
    """Run the application; ChannelHungUp from any verb propagates to the session."""
    if kind in (HANDLER_FLOW, HANDLER_APP_JSON):
        try:
            if kind == HANDLER_FLOW:
                return HandlerResult(FlowRunner(validate_flow(app.flow_definition)).run(ctx))
            return HandlerResult(run_verbs(ctx, _app_json_verbs(app)))
        except MediaUrlRefused as exc:  # the saved app's host now resolves somewhere internal
            log.warning("call %s: application %s: %s", ctx.call_id, app.id, exc)
            return HandlerResult(run_verbs(ctx, _APOLOGY_VERBS), exc.reason)

    def hooked() -> HandlerResult:
        reply = fetch_first(app.call_hook_url or "", app.call_hook_method, first_body)
        if reply is None:
            return HandlerResult(VerbOutcome.end("no_instructions"))
        return HandlerResult(run_verbs(ctx, parse_verb_list(reply)))

    return _with_fallback(ctx, app, hooked)


def _app_json_verbs(app: AppSettings) -> list:
    """An application's app_json; a list the platform built (no application id: a callback's
    or campaign's answered customer) may use the platform verbs (``campaign_wait``)."""
    return parse_verb_list(app.app_json, PLATFORM_REGISTRY if app.id is None else REGISTRY)


def run_hooked_verbs(ctx: VerbContext, app: AppSettings, verbs: list) -> HandlerResult:
    """Verbs from the customer's server (e.g. a WebSocket app's redirect command)."""
    return _with_fallback(ctx, app, lambda: HandlerResult(run_verbs(ctx, verbs)))


def _with_fallback(ctx: VerbContext, app: AppSettings, run: Callable[[], HandlerResult]) -> HandlerResult:
    """The customer's server failing — the first request or any later hook (actionHook,
    redirect) — is one failure: the caller hears the fallback, never dead air."""
    try:
        return run()
    except WebhookFailed as exc:
        log.warning("call %s: application %s unreachable: %s", ctx.call_id, app.id, exc)
        return _fallback(ctx, app, f"webhook_failed:{exc.reason}")
    except VerbListRejected as exc:
        log.warning("call %s: application %s reply rejected: %s", ctx.call_id, app.id, exc.errors)
        return _fallback(ctx, app, "instructions_rejected")
    except MediaUrlRefused as exc:
        log.warning("call %s: application %s: %s", ctx.call_id, app.id, exc)
        return _fallback(ctx, app, exc.reason)


_APOLOGY_VERBS = parse_verb_list([{"verb": "say", "text": APOLOGY},
                                  {"verb": "hangup", "reason": "application_failed"}])


def _fallback(ctx: VerbContext, app: AppSettings, error: str) -> HandlerResult:
    if app.app_json:
        try:
            return HandlerResult(run_verbs(ctx, _app_json_verbs(app)), error)
        except MediaUrlRefused as exc:  # the fallback's own media is refused: apologise
            log.warning("call %s: application %s fallback: %s", ctx.call_id, app.id, exc)
    return HandlerResult(run_verbs(ctx, _APOLOGY_VERBS), error)
