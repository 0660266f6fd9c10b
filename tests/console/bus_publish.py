"""Publishes bus events for the console's live-view browser tests and benchmark, through the
product's own path: ``emit`` writes the outbox row and this process's ``OutboxPublisher``
relays it to RabbitMQ, as a controller does.

A line-oriented child process (the node suite and benchmarks/console_bench.py drive it): each
line on stdin is a JSON request, each answer one JSON line on stdout.

- ``{"action": "enqueue", "account", "queue", "callId"}``: what the queue verb does when a
  caller joins a line: the caller in the Redis line (``Presence.join``), then
  ``queue.caller.enqueued``;
- ``{"action": "emit", "account", "type", "payload"}``: any event;
- ``{"action": "running", "account", "callId", "direction", "from", "to"}``: what a controller's
  session writes for a call it took and answered (the live-call registry,
  app/calls/live_calls.py), with no event: a call already running when a page opens.

The answer ``{"emittedAt": <ms>}`` is the wall-clock time just before ``emit`` (the start of
the bus event's journey to the screen), sent once the broker has the event.
"""
from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

from app.events.payloads import emit
from app.events.publisher import start_publisher, stop_publisher


def _enqueue(request: dict[str, Any]) -> None:
    import redis

    from app.contact.presence import Presence
    from app.settings import get_settings

    settings = get_settings()
    presence = Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)
    position = presence.join(request["account"], request["queue"], request["callId"])
    emit("queue.caller.enqueued", {"callId": request["callId"], "traceId": str(uuid.uuid4()),
                                   "accountSid": request["account"], "queue": request["queue"],
                                   "position": position}, account_id=request["account"])


def _running(request: dict[str, Any]) -> None:
    import redis

    from app.calls import live_calls
    from app.settings import get_settings

    settings = get_settings()
    live_calls.register(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix, request["callId"],
                        request["account"], "console-test", direction=request["direction"],
                        from_number=request["from"], to_number=request["to"], answered=True)


def main() -> int:
    publisher = start_publisher(poll_seconds=0.05)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            emitted_at = time.time() * 1000
            if request["action"] == "enqueue":
                _enqueue(request)
            elif request["action"] == "running":
                _running(request)
            else:
                emit(request["type"], request["payload"], account_id=request["account"])
            if not publisher.flush(timeout=10):
                print(json.dumps({"error": "the broker did not take the event within 10 s"}), flush=True)
                return 1
            print(json.dumps({"emittedAt": emitted_at}), flush=True)
    finally:
        stop_publisher()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
