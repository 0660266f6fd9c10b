"""Closed value sets shared by models, migrations' CHECK constraints, the API and the CLI.

Kept as tuples of strings (not PostgreSQL ENUM types): adding a value is then one CHECK
constraint swap in a migration instead of an ``ALTER TYPE`` that cannot run in a transaction.
Migrations copy these literals rather than importing them, so an old revision never changes.
"""
from __future__ import annotations

LICENSES: tuple[str, ...] = ("api-access", "queue-mgmt", "programmable-voice")
PERMISSIONS: tuple[str, ...] = ("api_keys.create", "api_keys.delete", "recordings.view")
USER_ROLES: tuple[str, ...] = ("admin", "agent", "supervisor")

ANSWERING_MODES: tuple[str, ...] = ("call_flow", "webhook")
HOOK_METHODS: tuple[str, ...] = ("GET", "POST")
TRANSPORTS: tuple[str, ...] = ("udp", "tcp", "tls")
# a carrier's SRTP (SDES) policy on both legs: docs/trunks.md "SRTP"
SRTP_MODES: tuple[str, ...] = ("off", "optional", "mandatory")

AGENT_STATES: tuple[str, ...] = ("available", "not_ready", "wrap_up", "offline")
CALLBACK_STATUSES: tuple[str, ...] = ("pending", "dialing", "completed", "failed", "cancelled")
# how a queue picks the agent for its first waiting caller (docs/agents.md "Strategies")
QUEUE_STRATEGIES: tuple[str, ...] = ("longest_idle", "round_robin", "fewest_calls", "ring_all")

DIALER_MODES: tuple[str, ...] = ("preview", "progressive", "power", "predictive")
CAMPAIGN_STATUSES: tuple[str, ...] = ("draft", "scheduled", "running", "paused", "completed", "archived")
CONTACT_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "failed", "do_not_call")
# what one dial attempt of a campaign contact ended as (app/campaigns/retries.py): ``human`` is a
# live answer connected to an agent; every other one may be retried per the campaign's policy
ATTEMPT_OUTCOMES: tuple[str, ...] = ("human", "busy", "no_answer", "machine", "failed", "abandoned")
# what a campaign does when a customer answers (app/voice/amd.py): no detection; detect and hang
# up on machines; detect and leave a message after the beep; detect and connect anyway
AMD_MODES: tuple[str, ...] = ("off", "hangup", "message", "connect")
# the detection's verdict in reports (call records, contacts): mod_amd's three, lower-cased, and
# ``none`` when it ran but the customer hung up before its verdict (NULL: no detection ran)
AMD_RESULTS: tuple[str, ...] = ("human", "machine", "notsure", "none")

CALL_DIRECTIONS: tuple[str, ...] = ("inbound", "outbound")
CALL_STATUSES: tuple[str, ...] = ("completed", "no-answer", "busy", "failed", "canceled", "refused")

RECORDING_FORMATS: tuple[str, ...] = ("mp3", "wav")
RECORDING_STATUSES: tuple[str, ...] = ("recorded", "transcribing", "transcribed", "failed")
SENTIMENT_LABELS: tuple[str, ...] = ("negative", "neutral", "positive")
