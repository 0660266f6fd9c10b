"""Outbound calls to customers' servers: call webhooks, status hooks, ws(s) call handlers.

Entry points (see docs/webhooks.md):

* :func:`check_url_on_save` — API validation of a URL a tenant saves (raises ``UnsafeUrl``).
* :class:`WebhookClient` — ``fetch_instructions(...)`` / ``post_status(...)``; raises
  :class:`WebhookFailed`.
* :class:`WsCallHandler` — the WebSocket alternative for ``ws://`` / ``wss://`` handlers.
* :func:`sign` / :func:`verify` — ``X-Signature``.
"""
from app.webhooks.client import WebhookClient, get_client, resolve_hook_url
from app.webhooks.errors import Reason, WebhookFailed
from app.webhooks.resolver import ResolutionFailed, Resolver, StaticResolver, SystemResolver
from app.webhooks.signing import SIGNATURE_HEADER, sign, verify
from app.webhooks.url_guard import check_url_on_save, resolve_public
from app.webhooks.ws_handler import WsCallHandler

__all__ = [
    "Reason", "WebhookFailed", "ResolutionFailed", "Resolver", "StaticResolver",
    "SystemResolver", "SIGNATURE_HEADER", "sign", "verify", "check_url_on_save",
    "resolve_public", "WebhookClient", "get_client", "resolve_hook_url", "WsCallHandler",
]
