"""What a power/predictive campaign's answered customer runs: wait for the first free agent of
its agent group, at most ``CAMPAIGN_ABANDON_CONNECT_SECONDS``; else hear the campaign's
safe-harbour message and be hung up (the attempt's outcome is then ``abandoned``: answered,
never connected to an agent — app/campaigns/dialer.outcome_of).

The list is built by the platform (app/calls/route.py) for the platform verb ``campaign_wait``
(app/verbs/campaign_wait.py), which no customer's reply can name.
"""
from __future__ import annotations

from typing import Any, Optional

# Said when the campaign sets neither text nor recording. Short (≈ 5 s with flite): the person
# answered a call that nobody is there to take, and is told so, and that they will be called again.
DEFAULT_TEXT = "Sorry, all our agents are busy at the moment. We will call you back. Goodbye."
WAIT_VERB = "campaign_wait"
# the call record's hangup reason of an answer no agent took in time (after the message)
ABANDONED_REASON = "campaign_abandoned"


def message(text: Optional[str], url: Optional[str]) -> dict[str, str]:
    """The safe-harbour part of the wait verb: a recording to play, else text to say."""
    return {"safeHarbourUrl": url} if url else {"safeHarbourText": text or DEFAULT_TEXT}


def wait_verbs(queue_name: str, text: Optional[str], url: Optional[str]) -> list[dict[str, Any]]:
    """The answered customer's verb list: wait in ``queue_name``'s line for an agent."""
    return [{"verb": WAIT_VERB, "name": queue_name, **message(text, url)}]
