"""What happens to a contact after one dial attempt: done, dialled again later, or given up.

Pure. ``human`` (a live answer connected to an agent) completes the contact; every other
outcome follows the campaign's rule for it — dial again ``delay_seconds`` later while fewer
than ``max_attempts`` attempts were made, else the contact is ``failed``. ``max_attempts``
counts every attempt of the contact, whatever their outcomes, so a number that is busy once and
then never answers is still bounded by the rule of its last outcome.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping

from app import limits

RETRYABLE = tuple(limits.CAMPAIGN_DEFAULT_RETRIES)


@dataclass(frozen=True)
class RetryRule:
    delay_seconds: int
    max_attempts: int


@dataclass(frozen=True)
class Decision:
    status: str  # the contact's next status: pending (retry), completed or failed
    next_attempt_at: datetime | None


def rules(policy: Mapping[str, Any]) -> dict[str, RetryRule]:
    """The campaign's ``retry_policy`` with the defaults of app/limits.py filled in."""
    merged = {}
    for outcome, (delay, attempts) in limits.CAMPAIGN_DEFAULT_RETRIES.items():
        given = policy.get(outcome) or {}
        merged[outcome] = RetryRule(int(given.get("delay_seconds", delay)), int(given.get("max_attempts", attempts)))
    return merged


def decide(policy: Mapping[str, Any], outcome: str, attempts: int, now: datetime) -> Decision:
    """The contact's fate after its ``attempts``-th attempt ended as ``outcome``."""
    if outcome == "human":
        return Decision("completed", None)
    rule = rules(policy)[outcome]
    if attempts >= rule.max_attempts:
        return Decision("failed", None)
    return Decision("pending", now + timedelta(seconds=rule.delay_seconds))
