"""campaign_wait → a power/predictive campaign's answered customer waits for an agent.

A platform verb (app/calls/route.py builds it; ``PLATFORM_REGISTRY`` only, so no customer's
reply can name it): the ``queue`` verb on the campaign's agent group — the same line and the
same atomic agent claim inbound callers use — with the wait cut to
``CAMPAIGN_ABANDON_CONNECT_SECONDS`` and the claim asked every
``CAMPAIGN_WAIT_CLAIM_INTERVAL_SECONDS`` (not the queue's 2 s, which would give one chance in
the whole wait), no position announcement, no timeout hook. An agent claimed in time is
offered the call as any queue caller's; none → the safe-harbour message (said or played), then
hang-up with ``ABANDONED_REASON``: the attempt is ``abandoned`` (app/campaigns/dialer.outcome_of).
"""
from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, validates_schema

from app import limits
from app.campaigns.safe_harbour import ABANDONED_REASON
from app.verbs.base import OutcomeKind, VerbOutcome
from app.verbs.context import VerbContext
from app.verbs.fields import Text, https_url
from app.verbs.hangup import Hangup
from app.verbs.play import Play
from app.verbs.queue import Queue, QueueSchema
from app.verbs.say import Say


class CampaignWaitSchema(QueueSchema):
    safeHarbourText = Text(min_length=1, max_length=limits.CAMPAIGN_SAFE_HARBOUR_TEXT_MAX)
    safeHarbourUrl = https_url()

    @validates_schema
    def _one_message(self, data: dict, **_: object) -> None:
        if bool(data.get("safeHarbourText")) == bool(data.get("safeHarbourUrl")):
            raise ValidationError("Exactly one of safeHarbourText and safeHarbourUrl.")


class CampaignWait(Queue):
    name = "campaign_wait"
    schema_class = CampaignWaitSchema
    claim_interval_seconds = limits.CAMPAIGN_WAIT_CLAIM_INTERVAL_SECONDS

    def __init__(self, params: dict[str, Any]) -> None:
        # the campaign's rules, never the configured queue's (its max wait, hook, announcements)
        super().__init__({**params, "timeout": limits.CAMPAIGN_ABANDON_CONNECT_SECONDS, "timeoutHook": None,
                          "announcePosition": False,
                          "given": frozenset({"timeout", "timeoutHook", "announcePosition", *params.get("given", ())})})

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        outcome = super().execute(ctx)
        if outcome.kind is not OutcomeKind.END or outcome.reason != "queue_timeout":
            return outcome
        url = self.params.get("safeHarbourUrl")
        message = (Play.from_data({"verb": "play", "url": url}) if url
                   else Say.from_data({"verb": "say", "text": self.params["safeHarbourText"]}))
        return VerbOutcome.replace([message, Hangup.from_data({"verb": "hangup", "reason": ABANDONED_REASON})])
