"""The five durable topic exchanges and which routing keys belong to which (SPEC.md "Events").

An explicit registry: ``publish`` refuses a routing key on the wrong exchange, so a typo
cannot silently create traffic nobody is bound to.
"""
from __future__ import annotations

import fnmatch

CALL_EVENTS = "call.events"
MEDIA_EVENTS = "media.events"
SYSTEM_EVENTS = "system.events"
USER_EVENTS = "user.events"
SENTIMENT_EVENTS = "sentiment.events"

EXCHANGE_TYPE = "topic"

# exchange -> routing keys (fnmatch patterns for the families the spec names with '*')
ROUTING_KEYS: dict[str, tuple[str, ...]] = {
    CALL_EVENTS: (
        "call.started", "call.ringing", "call.answered", "call.amd", "call.ended", "call.failed",
        "call.hold", "call.resumed", "call.transferred", "call.conferenced", "call.conference.left",
        "call.control.start", "call.control.stop", "call.control.applied", "call.originate",
        "call.control",  # a request to the controllers (app/calls/control.py), like call.originate
        "call.supervise",  # a command to the controllers (supervisor leg), like call.originate
    ),
    MEDIA_EVENTS: (
        "media.recording.completed", "media.recording.failed",
        "media.transcription.complete", "media.transcription.failed",
        "media.transcript.ingested", "media.transcript.failed",
    ),
    SYSTEM_EVENTS: (
        "agent.*", "queue.*",
        "system.service.up", "system.service.down", "system.service.heartbeat",
        "system.config.changed", "routing.config.changed",
        "system.gateway.up", "system.gateway.down", "system.gateway.registration",
        "interaction.*",
        "campaign.*",  # campaign.state_changed, campaign.attempt (docs/events.md)
    ),
    USER_EVENTS: ("user.registered", "user.unregistered", "user.status_change"),
    SENTIMENT_EVENTS: ("sentiment.score", "sentiment.emotion", "sentiment.summary"),
}

EXCHANGES: tuple[str, ...] = tuple(ROUTING_KEYS)


class UnknownRoutingKey(ValueError):
    """A routing key that is not registered on the named exchange."""


def check_routing_key(exchange: str, routing_key: str) -> None:
    patterns = ROUTING_KEYS.get(exchange)
    if patterns is None:
        raise UnknownRoutingKey(f"unknown exchange {exchange!r}; expected one of {', '.join(EXCHANGES)}")
    if not any(fnmatch.fnmatchcase(routing_key, p) for p in patterns):
        raise UnknownRoutingKey(f"routing key {routing_key!r} is not registered on {exchange}")


def exchange_for(routing_key: str) -> str:
    """The exchange a routing key belongs to (each key belongs to exactly one)."""
    for exchange, patterns in ROUTING_KEYS.items():
        if any(fnmatch.fnmatchcase(routing_key, p) for p in patterns):
            return exchange
    raise UnknownRoutingKey(f"routing key {routing_key!r} is not registered on any exchange")


def declare_all(channel) -> None:
    """Idempotent: durable topic exchanges survive broker restarts."""
    for name in EXCHANGES:
        channel.exchange_declare(exchange=name, exchange_type=EXCHANGE_TYPE, durable=True)
