"""The platform's durable work queues: every queue a consumer shares with its peers (one
command to one controller, one job to one worker), with its bindings and arguments.

Why a registry the publisher declares too: a message published to an exchange with no queue
bound is dropped by the broker. On a fresh broker (a new deployment, a new vhost) the queues
exist only once their consumer first started, so a recording completed, a call originated or
a call ended before that was lost without a trace (seen on the real switch: a recording that
finished before the first media worker started was never transcribed). The outbox publisher
declares every queue here when it connects, before it publishes anything, so each message has
its queue from the first one on; each consumer declares its own queue from the same entry (the
broker refuses a second declaration with other arguments, so there must be only one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app import limits
from app.events.exchanges import CALL_EVENTS, MEDIA_EVENTS, SYSTEM_EVENTS, declare_all


@dataclass(frozen=True)
class WorkQueue:
    name: str
    bindings: tuple[tuple[str, str], ...]  # (exchange, routing key)
    arguments: dict[str, Any] = field(default_factory=dict)


# controllers: one request to exactly one controller process
CALL_CONTROL = WorkQueue("controller.call.control", ((CALL_EVENTS, "call.control"),),
                         {"x-single-active-consumer": True})
CALL_SUPERVISE = WorkQueue("controller.call.supervise", ((CALL_EVENTS, "call.supervise"),))
CALL_ORIGINATE = WorkQueue("controller.call.originate", ((CALL_EVENTS, "call.originate"),))
# sbc workers
CALLBACK_DISPATCH = WorkQueue("workers.callback.dispatch",
                              ((SYSTEM_EVENTS, "agent.state.changed"), (CALL_EVENTS, "call.ended")))
# a campaign call's way through (app/campaigns/measures.py "calls") and its outcome
CAMPAIGN_OUTCOMES = WorkQueue("workers.campaign.outcomes",
                              ((CALL_EVENTS, "call.ended"), (CALL_EVENTS, "call.answered"), (CALL_EVENTS, "call.amd"),
                               (SYSTEM_EVENTS, "agent.accept")))
# media workers: a quorum queue (replicated, counts deliveries: app/media/worker.py says why)
MEDIA_DEAD_LETTER_EXCHANGE = "media.dead"
MEDIA_DEAD_LETTER_QUEUE = "media.transcription.dead"
MEDIA_TRANSCRIPTION = WorkQueue("media.transcription", ((MEDIA_EVENTS, "media.recording.completed"),), {
    "x-queue-type": "quorum",
    # the broker's own bound: one delivery more than the worker allows, so the worker sees
    # the exhausted job once and ends it with media.transcription.failed
    "x-delivery-limit": limits.MEDIA_JOB_MAX_DELIVERIES,
    "x-dead-letter-exchange": MEDIA_DEAD_LETTER_EXCHANGE,
})

WORK_QUEUES: tuple[WorkQueue, ...] = (CALL_CONTROL, CALL_SUPERVISE, CALL_ORIGINATE, CALLBACK_DISPATCH,
                                      CAMPAIGN_OUTCOMES, MEDIA_TRANSCRIPTION)


def declare(channel: Any, queue: WorkQueue) -> str:
    """Declare ``queue`` and its bindings (idempotent); returns its name."""
    channel.queue_declare(queue.name, durable=True, arguments=queue.arguments or None)
    for exchange, key in queue.bindings:
        channel.queue_bind(queue.name, exchange, routing_key=key)
    return queue.name


def declare_media_dead_letters(channel: Any) -> None:
    channel.exchange_declare(exchange=MEDIA_DEAD_LETTER_EXCHANGE, exchange_type="fanout", durable=True)
    channel.queue_declare(MEDIA_DEAD_LETTER_QUEUE, durable=True)
    channel.queue_bind(MEDIA_DEAD_LETTER_QUEUE, MEDIA_DEAD_LETTER_EXCHANGE)


def declare_every_queue(channel: Any) -> None:
    """The exchanges, then every work queue: what the publisher does on connecting."""
    declare_all(channel)
    declare_media_dead_letters(channel)
    for queue in WORK_QUEUES:
        declare(channel, queue)
