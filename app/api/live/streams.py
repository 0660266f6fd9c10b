"""Bus events → the wallboards open in this API process.

One consumer per API process on its own server-named, exclusive, auto-deleted queue (as the
agent channel's relay, app/agent_channel/relay.py): every process sees every event of the
bound keys and hands each only to the streams **of the event's account** (the envelope's
``account``; platform events, with none, reach no page). A stream never reads another
account's figures either: its snapshots are read under its own account's row-level security.

What a page is sent (docs/api.md "Live view"), as server-sent events:

- ``snapshot``: the board (app/api/live/board.py), when the stream opens and again after any
  event that changes a waiting line, an agent or the calls in progress (read once per account
  for all its pages; events arriving during a read make one more read, not one each);
- ``queue``: a ``queue.metrics`` payload as the controllers published it (every 30 s);
- ``call``: a call started, was answered, ended or failed (the calls-in-progress list);
- ``gateway``: one of the account's gateways changed health (``system.gateway.up``/``.down``)
  or registration state (``system.gateway.registration``), for the Carriers screen. These
  events are platform events (the controller knows the gateway, not whose it is), so the hub
  finds the gateway's owner in the database (``GatewayOwners``) and hands the event only to that
  account's streams; a platform carrier's gateway, or an unknown one, reaches no page.

- ``bus``: ``{"available": false}`` when this process's consumer lost the broker (RabbitMQ
  away: the figures on the page stop changing, and the page says so rather than showing them
  as live), ``{"available": true}`` when it is back; also right after the first snapshot of a
  stream opened while the broker is away.

Events missed while the process is cut off from the broker are not replayed: when the broker
is back every page gets a fresh snapshot, and a page that loses its stream opens a new one (a
new snapshot).
"""
from __future__ import annotations

import json
import logging
import uuid
from collections import defaultdict
from typing import Any, Callable, Iterator, Optional

import gevent
import gevent.lock
import gevent.queue

from app import limits
from app.api.live.board import Board
from app.events.consumer import EventConsumer
from app.events.envelope import Envelope
from app.events.exchanges import CALL_EVENTS, SYSTEM_EVENTS

log = logging.getLogger(__name__)

QUEUE_METRICS = "queue.metrics"
CALL_PHASES = {"call.started": "started", "call.answered": "answered", "call.ended": "ended",
               "call.failed": "failed"}
# events after which the board is read again (a line, an agent or the calls in progress changed)
REFRESHING = ("queue.caller.enqueued", "queue.caller.dequeued", "queue.caller.abandoned",
              "agent.state.changed", "agent.offer", "agent.accept", "agent.missed", "agent.reject",
              *CALL_PHASES)
GATEWAY_EVENTS = ("system.gateway.up", "system.gateway.down", "system.gateway.registration")
BINDINGS = [(SYSTEM_EVENTS, key) for key in (QUEUE_METRICS, *REFRESHING) if not key.startswith("call.")] + \
           [(CALL_EVENTS, key) for key in CALL_PHASES] + [(SYSTEM_EVENTS, key) for key in GATEWAY_EVENTS]
_CLOSE = None  # what ``close`` puts in a stream's queue


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def bus_event(available: bool) -> str:
    return sse("bus", {"available": available})


def _call(env: Envelope) -> dict[str, Any]:
    p = env.payload
    return {"callId": p.get("callId"), "phase": CALL_PHASES[env.type], "direction": p.get("direction"),
            "from": p.get("from"), "to": p.get("to"), "at": p.get("at") or env.occurred_at}


def _gateway(env: Envelope) -> dict[str, Any]:
    """A gateway event as the Carriers screen applies it: ``health`` (up/down) or
    ``registration`` ({state, previous, sipStatus, phrase}), never both."""
    p = env.payload
    out: dict[str, Any] = {"gatewayId": p.get("gatewayId"), "carrierId": p.get("carrierId"),
                           "at": p.get("at") or env.occurred_at}
    if env.type == "system.gateway.registration":
        out["registration"] = {"state": p.get("state"), "previous": p.get("previous"),
                               "sipStatus": p.get("sipStatus"), "phrase": p.get("phrase")}
    else:
        out["health"] = "up" if env.type == "system.gateway.up" else "down"
        out["sipStatus"], out["phrase"] = p.get("sipStatus"), p.get("phrase")
    return out


def render(env: Envelope) -> Optional[str]:
    """What the page is sent for ``env`` itself (None: only the board read again)."""
    if env.type in GATEWAY_EVENTS:
        return sse("gateway", _gateway(env))
    if env.type == QUEUE_METRICS:
        return sse("queue", {k: v for k, v in env.payload.items() if k != "accountSid"})
    if env.type in CALL_PHASES:
        return sse("call", _call(env))
    return None


class GatewayOwners:
    """Gateway id -> the account that owns it (None: a platform gateway, or none such), read
    from the database with the platform session: the gateway events carry no account. An owner
    never changes (a gateway stays with its carrier), so owners are remembered; an unknown id
    is not (its row may not be committed yet)."""

    def __init__(self, limit: int = limits.LIVE_VIEW_GATEWAY_OWNERS_CACHED) -> None:
        self.known: dict[str, Optional[str]] = {}
        self.limit = limit

    def lookup(self, gateway_id: str) -> tuple[bool, Optional[str]]:
        """(found, owner account) from the database."""
        from sqlalchemy import select

        from app.db import platform_session
        from app.models import Gateway

        try:
            key = uuid.UUID(gateway_id)
        except (TypeError, ValueError):
            return False, None
        with platform_session() as db:
            row = db.execute(select(Gateway.account_id).where(Gateway.id == key)).first()
        return (row is not None), (str(row[0]) if row is not None and row[0] is not None else None)

    def owner(self, gateway_id: Optional[str]) -> Optional[str]:
        if not gateway_id:
            return None
        if gateway_id in self.known:
            return self.known[gateway_id]
        found, owner = self.lookup(gateway_id)
        if found:
            if len(self.known) >= self.limit:
                self.known.clear()
            self.known[gateway_id] = owner
        return owner


class LiveStream:
    """One open page: its account and what waits to be written to it."""

    def __init__(self, account_id: str) -> None:
        self.account_id = account_id
        self.pending: gevent.queue.Queue = gevent.queue.Queue(maxsize=limits.LIVE_VIEW_STREAM_BUFFER)
        self.overflowed = False

    def push(self, text: Optional[str]) -> None:
        try:
            self.pending.put_nowait(text)
        except gevent.queue.Full:  # the page stopped reading: cut it off, it reconnects
            self.overflowed = True

    def close(self) -> None:
        self.push(_CLOSE)

    def events(self, first: dict[str, Any], done: Callable[[], None],
               bus_available: bool = True) -> Iterator[str]:
        """The response body: ``first`` snapshot (then ``bus`` unavailable if the broker is away
        now), then what the hub pushes, until the page goes (its next write fails), the stream
        overflows or is closed."""
        try:
            yield "retry: 2000\n" + sse("snapshot", first)
            if not bus_available:
                yield bus_event(False)
            while not self.overflowed:
                try:
                    text = self.pending.get(timeout=limits.LIVE_VIEW_KEEPALIVE_SECONDS)
                except gevent.queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                if text is _CLOSE:
                    return
                yield text
        finally:
            done()


class LiveHub:
    """This process's open streams by account, fed by one bus consumer.

    The board is read again once per account however many of its pages are open, in a greenlet
    of its own (the consumer goes on with other accounts' events meanwhile); events that ask for
    it while it is being read make one more read after it, not one each."""

    def __init__(self, board: Board, owners: Optional[GatewayOwners] = None) -> None:
        self.board = board
        self.owners = owners if owners is not None else GatewayOwners()
        self.streams: dict[str, set[LiveStream]] = defaultdict(set)
        self.consumer: Optional[EventConsumer] = None
        self._reading: set[str] = set()   # accounts whose board is being read
        self._again: set[str] = set()     # ... and asked for again meanwhile
        self.bus_available = True         # this process's consumer holds the broker
        self._watcher: Optional[gevent.Greenlet] = None

    def start(self, **consumer_kw: Any) -> "LiveHub":
        self.consumer = EventConsumer(BINDINGS, self.deliver, **consumer_kw).start()
        self.consumer.ready.wait(10)  # events from now on reach this process's streams
        self.bus_available = self.consumer.ready.is_set()
        self._watcher = gevent.spawn(self._watch_bus)
        return self

    def _watch_bus(self) -> None:
        assert self.consumer is not None
        while True:
            available = self.consumer.ready.is_set()
            if available != self.bus_available:
                self.bus_changed(available)
            gevent.sleep(limits.LIVE_VIEW_BUS_CHECK_SECONDS)

    def bus_changed(self, available: bool) -> None:
        """The consumer lost (or got back) the broker: every page is told; on the way back each
        account's board is read again, as the events missed meanwhile are not replayed."""
        self.bus_available = available
        log.warning("live view: the bus is %s", "back" if available else "unavailable; pages told")
        for account in list(self.streams):
            self._push(account, bus_event(available))
            if available:
                self.refresh(account)

    def deliver(self, env: Envelope) -> None:
        account = env.account or ""
        if env.type in GATEWAY_EVENTS:
            if not self.streams:
                return  # nobody watches: no database read
            try:
                account = self.owners.owner(env.payload.get("gatewayId")) or ""
            except Exception:  # the database away: the Carriers page still has its own reads
                log.warning("live view: a gateway's owner could not be read", exc_info=True)
                return
        if not self.streams.get(account):
            return
        text = render(env)
        if text is not None:
            self._push(account, text)
        if env.type in REFRESHING:
            self.refresh(account)

    def refresh(self, account: str) -> None:
        if account in self._reading:
            self._again.add(account)
            return
        self._reading.add(account)
        gevent.spawn(self._read_board, account)

    def _read_board(self, account: str) -> None:
        try:
            while True:
                self._again.discard(account)
                try:
                    board = self.board.snapshot(account)
                except Exception:  # the database or Redis away: end the streams, the pages reconnect
                    log.warning("live view: the board could not be read; ending the streams", exc_info=True)
                    self._push(account, _CLOSE)
                    return
                self._push(account, sse("snapshot", board))
                if account not in self._again:
                    return
        finally:
            self._reading.discard(account)

    def _push(self, account: str, text: Optional[str]) -> None:
        for stream in list(self.streams.get(account, ())):
            stream.push(text)

    def open(self, account_id: str) -> tuple[LiveStream, dict[str, Any]]:
        """A stream attached before its first snapshot is read: no event falls in between."""
        stream = LiveStream(account_id)
        self.streams[account_id].add(stream)
        try:
            return stream, self.board.snapshot(account_id)
        except Exception:
            self.close(stream)
            raise

    def body(self, stream: LiveStream, first: dict[str, Any]) -> Iterator[str]:
        return stream.events(first, lambda: self.close(stream), self.bus_available)

    def close(self, stream: LiveStream) -> None:
        streams = self.streams.get(stream.account_id)
        if streams is not None:
            streams.discard(stream)
            if not streams:
                del self.streams[stream.account_id]

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.kill()
        if self.consumer is not None:
            self.consumer.stop()
        for streams in list(self.streams.values()):
            for stream in list(streams):
                stream.close()


class LiveRuntime:
    """The hub, started with the first stream of the process (an API that nobody watches
    keeps no consumer)."""

    def __init__(self) -> None:
        self.lock = gevent.lock.Semaphore()
        self.hub: Optional[LiveHub] = None

    def get(self) -> LiveHub:
        with self.lock:
            if self.hub is None:
                import redis

                from app.settings import get_settings

                settings = get_settings()
                client = redis.Redis.from_url(settings.redis_url, socket_timeout=5)
                self.hub = LiveHub(Board(client, settings.redis_key_prefix)).start()
            return self.hub

    def stop(self) -> None:
        if self.hub is not None:
            self.hub.stop()
