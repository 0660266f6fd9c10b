"""The API process's open agent sockets, and takeover across every API process.

One connection per agent wins: the newest. Each authenticated connection writes its session id
to ``<prefix>agentchan:<account>:<agent>`` in Redis (the owner) and announces itself on the
Redis pub/sub channel ``<prefix>agentchan:takeover``. Every API process listens; a process with
a local connection of that agent that is no longer the owner sends it ``takeover`` and closes
it (4001). Comparing with the owner key, not with the announcement, settles two logins racing
on two processes: both announce, only the one that wrote last stays.

Why Redis pub/sub and not the bus: a takeover is coordination between API processes, not a
tenant event (nothing else wants it, nothing should replay it), and the owner key lives there
already. If the listener is cut off from Redis, a command on an old socket still finds it is no
longer the owner (``is_owner``) and closes it.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Optional

import gevent
import redis

from app.agent_channel.connection import AgentConnection

log = logging.getLogger(__name__)

OWNER_TTL_SECONDS = 24 * 3600
# KEYS[1] owner key; ARGV[1] session id: delete only our own ownership
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Hub:
    def __init__(self, client: redis.Redis, prefix: str, *, listener: Optional[redis.Redis] = None) -> None:
        """``listener``: the client for pub/sub, without a read timeout (a quiet channel is
        not a broken one); defaults to ``client``."""
        self.redis = client
        self.listener_client = listener or client
        self.prefix = prefix
        self.channel = f"{prefix}agentchan:takeover"
        self.local: dict[str, AgentConnection] = {}        # agent id -> its connection here
        self._release = client.register_script(_RELEASE)
        self._listener: Optional[gevent.Greenlet] = None
        self._stopping = False

    def owner_key(self, account_id: str, agent_id: str) -> str:
        return f"{self.prefix}agentchan:{account_id}:{agent_id}"

    # -- connections -----------------------------------------------------------------------------
    def attach(self, conn: AgentConnection) -> None:
        """``conn`` is now the agent's connection, here and in every API process."""
        self.redis.set(self.owner_key(conn.account_id, conn.agent_id), conn.session_id, ex=OWNER_TTL_SECONDS)
        older = self.local.get(conn.agent_id)
        self.local[conn.agent_id] = conn
        if older is not None and older is not conn:
            older.takeover()
        self.redis.publish(self.channel, json.dumps(
            {"account": conn.account_id, "agent": conn.agent_id, "session": conn.session_id}))

    def detach(self, conn: AgentConnection) -> None:
        if self.local.get(conn.agent_id) is conn:
            del self.local[conn.agent_id]
        try:
            self._release(keys=[self.owner_key(conn.account_id, conn.agent_id)], args=[conn.session_id])
        except redis.RedisError as exc:  # the key expires on its own
            log.warning("agent channel: owner of %s not released (%s)", conn.agent_id, exc)

    def is_owner(self, conn: AgentConnection) -> bool:
        """Still the agent's newest connection? (True when Redis cannot say: keep serving.)"""
        try:
            owner = self.redis.get(self.owner_key(conn.account_id, conn.agent_id))
        except redis.RedisError:
            return True
        owner = owner.decode() if isinstance(owner, bytes) else owner
        return owner is None or owner == conn.session_id

    def connection(self, account_id: Optional[str], agent_id: Any) -> Optional[AgentConnection]:
        """The local connection of ``agent_id`` if it belongs to ``account_id``."""
        conn = self.local.get(str(agent_id)) if agent_id else None
        if conn is None or conn.closed or (account_id is not None and conn.account_id != account_id):
            return None
        return conn

    def on_call(self, account_id: Optional[str], call_id: Any) -> list[AgentConnection]:
        """Local connections offered or connected to ``call_id``."""
        return [c for c in list(self.local.values())
                if not c.closed and call_id and str(call_id) in (c.offer_id, c.call_id)
                and (account_id is None or c.account_id == account_id)]

    # -- takeover announcements ------------------------------------------------------------------
    def start(self) -> "Hub":
        self._listener = gevent.spawn(self._listen)
        return self

    def stop(self) -> None:
        self._stopping = True
        if self._listener is not None:
            self._listener.kill(block=True, timeout=2)
        for conn in list(self.local.values()):
            conn.close(1001, "server going away")

    def _listen(self) -> None:
        delay = 0.2
        while not self._stopping:
            pubsub = self.listener_client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.channel)
                delay = 0.2
                for item in pubsub.listen():
                    self._announced(item.get("data"))
            except redis.RedisError as exc:
                log.warning("agent channel: takeover listener lost Redis (%s); retrying in %.1fs", exc, delay)
                gevent.sleep(delay)
                delay = min(delay * 2, 10.0)
            finally:
                pubsub.close()

    def _announced(self, data: Any) -> None:
        try:
            note = json.loads(data)
            agent_id = str(note["agent"])
        except (TypeError, ValueError, KeyError):
            return
        conn = self.local.get(agent_id)
        if conn is not None and conn.session_id != note.get("session") and not self.is_owner(conn):
            conn.takeover()
