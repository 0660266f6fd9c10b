"""The statusHook sender the pipeline uses: the webhook client's signed POST (same signing,
SSRF guard and retries as every webhook, docs/webhooks.md)."""
from __future__ import annotations

from typing import Any

from app.webhooks.client import get_client


def post_signed(url: str, body: dict[str, Any], *, secret: str | None,
                basic_auth: tuple[str, str] | None) -> None:
    """Raises ``WebhookFailed`` (or ``UnsafeUrl``) when the POST was not delivered."""
    get_client().post_status(url, body, secret=secret, basic_auth=basic_auth)
