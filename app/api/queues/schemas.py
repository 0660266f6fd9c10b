from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.models.enums import QUEUE_STRATEGIES


class QueueWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255),
                            metadata={"description": "Unique in the account; the queue verb's name"})
    moh = ma.fields.String(validate=validate.Length(min=1, max=255), metadata={
        "description": "Hold music: 'default' (the shipped music, the default), 'moh' (the switch's own "
                       "music stream) or the name of one of the account's uploaded files (/api/moh); "
                       "any other name is 422 unknown_moh"})
    max_wait_seconds = ma.fields.Integer(validate=validate.Range(min=1, max=86_400), metadata={
        "description": f"Default {limits.QUEUE_DEFAULT_MAX_WAIT_SECONDS}"})
    announce_position = ma.fields.Boolean()
    announce_interval_seconds = ma.fields.Integer(validate=validate.Range(min=5, max=3600), metadata={
        "description": f"Default {limits.QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS}"})
    timeout_hook_url = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=2048),
                                        metadata={"description": "https://, public; called when the wait runs out"})

    offer_timeout_seconds = ma.fields.Integer(validate=validate.Range(min=1, max=limits.QUEUE_MAX_OFFER_TIMEOUT_SECONDS), metadata={
        "description": "Seconds an agent's phone rings before the offer counts as missed (default 20)"})
    max_missed_offers = ma.fields.Integer(validate=validate.Range(min=1, max=100), metadata={
        "description": "Offers missed in a row that make the agent not_ready, reason missed (default 3)"})
    wrap_up_seconds = ma.fields.Integer(validate=validate.Range(min=0, max=limits.QUEUE_MAX_WRAP_UP_SECONDS), metadata={
        "description": "After-call work: the agent stays wrap_up this long after a call (default 10)"})
    strategy = ma.fields.String(validate=validate.OneOf(
        QUEUE_STRATEGIES, error="Must be one of: " + ", ".join(QUEUE_STRATEGIES) + "."), metadata={
        "description": "How the agent for the first waiting caller is chosen within the lowest tier "
                       "(docs/agents.md \"Strategies\"; default longest_idle)"})
    short_abandon_seconds = ma.fields.Integer(validate=validate.Range(min=0, max=limits.QUEUE_MAX_SHORT_ABANDON_SECONDS), metadata={
        "description": "A caller hanging up sooner than this is flagged shortAbandon (default 5, 0 = never)"})
    service_level_seconds = ma.fields.Integer(validate=validate.Range(min=1, max=limits.QUEUE_MAX_SERVICE_LEVEL_SECONDS), metadata={
        "description": "Service-level target of queue.metrics: % of answered callers who waited at most this (default 20)"})


class QueuePatchSchema(QueueWriteSchema):
    """PATCH body (partial=True)."""


class QueueSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    moh = ma.fields.String()
    max_wait_seconds = ma.fields.Integer()
    announce_position = ma.fields.Boolean()
    announce_interval_seconds = ma.fields.Integer()
    timeout_hook_url = ma.fields.String(allow_none=True)
    offer_timeout_seconds = ma.fields.Integer()
    max_missed_offers = ma.fields.Integer()
    wrap_up_seconds = ma.fields.Integer()
    strategy = ma.fields.String()
    short_abandon_seconds = ma.fields.Integer()
    service_level_seconds = ma.fields.Integer()
    created_at = ma.fields.AwareDateTime()
