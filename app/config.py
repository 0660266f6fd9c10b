"""Runtime configuration from the ``cluster_config`` table (SPEC: no external fetch at boot).

Why a table: the product runs air-gapped from pre-built images; everything that is not needed
to reach the database/broker/Redis (``app.settings``) is operator-editable data here, read at
boot on the platform path and re-read when ``system.config.changed`` arrives.

Keys (value is JSON; a missing key uses the default):

| key | type | default |
|---|---|---|
| freeswitch.nodes | list of {host, port[, password, sip_host, agent_sip_port]} | [{"host": "127.0.0.1", "port": 8021}]; a node without a password uses FS_ESL_PASSWORD (app.settings); `sip_host` (default `host`) and `agent_sip_port` (default 5070, its FS_AGENT_SIP_PORT) are where the other nodes send it cross-node queue offers (docs/agents.md "Several FreeSWITCH nodes") |
| controller.listen | {host, port} | {"host": "0.0.0.0", "port": 8084} |
| controller.advertise_host | str (address FreeSWITCH dials for `socket`) | "127.0.0.1" |
| controller.max_setups_in_flight | int (calls being set up before new ones get 503) | 200 (limits.CONTROLLER_MAX_SETUPS_IN_FLIGHT) |
| controller.max_loop_lag_ms | int (event-loop delay before new calls get 503) | 500 (limits.CONTROLLER_MAX_LOOP_LAG_MS) |
| webhook.vendor | str (WebSocket subprotocol audio.<vendor>.org) | "saas-sbc" |
| webhook.first_reply_deadline_seconds | int (all attempts of a call's first hook request) | 8 (limits.WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS) |
| recording.dir | str | "/var/spool/fs/rec" |
| moh.dir | str (hold music files, shared with FreeSWITCH: app/media/moh.py) | "/var/spool/fs/moh" |
| limiter.slot_ttl_seconds | int | 90 (limits.LIMITER_SLOT_TTL_SECONDS) |
| limiter.refresh_seconds | int | 30 (limits.LIMITER_REFRESH_SECONDS) |
| heartbeat.interval_seconds | int | 30 (limits.SERVICE_HEARTBEAT_SECONDS) |
| events.outbox_retention_seconds | int | 86400 |
| health.controller_port | int (controller's /healthz /readyz /metrics; 0 = off) | 8085 |
| health.workers_port | int (workers' /healthz /readyz /metrics; 0 = off) | 8086 |
| transcription.engine | pocketsphinx, whisper or vosk | "pocketsphinx" (model in its wheel) |
| transcription.whisper_model | str (ggml model file) | "" |
| transcription.vosk_model | str (Vosk model directory) | "" |
| transcription.workers | int (media worker processes) | 1 |
| transcription.threads | int (threads per whisper job) | 2 |

A stored value of the wrong type is ignored (logged) and the default is used: a typo by an
operator must not take the controller down.

Every key is honoured: ``REFUSED`` lists names that look like settings but are not runtime
configuration (``set_value`` refuses them, saying where the setting lives), so nothing can be
stored and silently ignored. ``unset`` removes a stored key (back to its default).
"""
from __future__ import annotations

import copy
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, cast

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import CursorResult

from app import limits
from app.db.engine import platform_session
from app.models import ClusterConfig
from app.settings import get_settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FreeswitchNode:
    host: str
    port: int
    password: str
    # where its peers reach its agent (internal) profile: cross-node queue offers
    sip_host: str = ""
    agent_sip_port: int = limits.AGENT_SIP_PORT

    @property
    def agent_sip_address(self) -> str:
        """``host:port`` of the node's agent profile, as the other nodes dial it."""
        return f"{self.sip_host or self.host}:{self.agent_sip_port}"

    def __repr__(self) -> str:  # never print the ESL password
        return f"FreeswitchNode(host={self.host!r}, port={self.port})"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _valid_nodes(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(n, dict) and isinstance(n.get("host"), str) and _is_int(n.get("port"))
        and isinstance(n.get("password", ""), str) and isinstance(n.get("sip_host", ""), str)
        and _is_int(n.get("agent_sip_port", limits.AGENT_SIP_PORT))
        and 0 < n.get("agent_sip_port", limits.AGENT_SIP_PORT) <= 65535 for n in v)


def _valid_listen(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("host"), str) and _is_int(v.get("port"))


# the names of app.media.engines.REGISTRY (kept here: config must not import the engines)
TRANSCRIPTION_ENGINES = ("pocketsphinx", "whisper", "vosk")

# key -> (default, validator). The registry is the documentation's table, in code.
DEFAULTS: dict[str, tuple[Any, Callable[[Any], bool]]] = {
    "freeswitch.nodes": ([{"host": "127.0.0.1", "port": 8021}], _valid_nodes),
    "controller.listen": ({"host": "0.0.0.0", "port": 8084}, _valid_listen),
    "controller.advertise_host": ("127.0.0.1", lambda v: isinstance(v, str) and bool(v)),
    "controller.max_setups_in_flight": (limits.CONTROLLER_MAX_SETUPS_IN_FLIGHT,
                                        lambda v: _is_int(v) and v >= 0),
    "controller.max_loop_lag_ms": (limits.CONTROLLER_MAX_LOOP_LAG_MS, lambda v: _is_int(v) and v > 0),
    "webhook.vendor": ("saas-sbc", lambda v: isinstance(v, str) and bool(v)),
    "webhook.first_reply_deadline_seconds": (limits.WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS,
                                             lambda v: _is_int(v) and 0 < v <= 60),
    "recording.dir": ("/var/spool/fs/rec", lambda v: isinstance(v, str) and v.startswith("/")),
    "moh.dir": ("/var/spool/fs/moh", lambda v: isinstance(v, str) and v.startswith("/")),
    "limiter.slot_ttl_seconds": (limits.LIMITER_SLOT_TTL_SECONDS, lambda v: _is_int(v) and v > 0),
    "limiter.refresh_seconds": (limits.LIMITER_REFRESH_SECONDS, lambda v: _is_int(v) and v > 0),
    "heartbeat.interval_seconds": (limits.SERVICE_HEARTBEAT_SECONDS, lambda v: _is_int(v) and v > 0),
    "events.outbox_retention_seconds": (limits.EVENT_OUTBOX_RETENTION_SECONDS,
                                        lambda v: _is_int(v) and v > 0),
    # read when the controller / workers start (a listener cannot move while serving)
    "health.controller_port": (limits.HEALTH_CONTROLLER_PORT, lambda v: _is_int(v) and 0 <= v <= 65535),
    "health.workers_port": (limits.HEALTH_WORKERS_PORT, lambda v: _is_int(v) and 0 <= v <= 65535),
    # media pipeline (app/media): read when the media workers start
    "transcription.engine": ("pocketsphinx", lambda v: v in TRANSCRIPTION_ENGINES),
    "transcription.whisper_model": ("", lambda v: isinstance(v, str)),
    "transcription.vosk_model": ("", lambda v: isinstance(v, str)),
    "transcription.workers": (1, lambda v: _is_int(v) and 1 <= v <= limits.MEDIA_WORKERS_MAX),
    "transcription.threads": (2, lambda v: _is_int(v) and 1 <= v <= 64),
}


# Names operators try that are not runtime configuration -> where the setting really lives.
REFUSED: dict[str, str] = {
    "token.lifetime_seconds": "the token lifetime is the API process's SBC_TOKEN_LIFETIME_SECONDS "
                              "(a security property every API replica must agree on at boot)",
    "gateway.ping_seconds": "the gateway OPTIONS ping interval is fixed (app.limits.GATEWAY_PING_SECONDS) "
                            "in the generated sofia gateways",
}


class RuntimeConfig:
    """A snapshot of ``cluster_config`` with typed accessors; ``reload()`` swaps the snapshot
    atomically and tells listeners (e.g. the controller re-reading its FreeSWITCH nodes)."""

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._listeners: list[Callable[["RuntimeConfig"], None]] = []
        self._lock = threading.Lock()
        self.version = 0

    @classmethod
    def load(cls) -> "RuntimeConfig":
        config = cls()
        config.reload()
        return config

    def reload(self) -> None:
        with platform_session() as session:
            rows = session.execute(select(ClusterConfig.key, ClusterConfig.value)).all()
        with self._lock:
            self._values = {r.key: r.value for r in rows}
            self.version += 1
        log.info("runtime configuration loaded: %d keys (version %d)", len(rows), self.version)
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                log.exception("runtime configuration listener failed")

    def stored_keys(self) -> set[str]:
        """Keys present in cluster_config (the rest use their defaults)."""
        return set(self._values)

    def on_reload(self, listener: Callable[["RuntimeConfig"], None]) -> None:
        self._listeners.append(listener)

    # generic ------------------------------------------------------------------------------
    def get(self, key: str) -> Any:
        """The stored value when valid, else the documented default (a deep copy: callers
        cannot mutate the snapshot)."""
        default, valid = DEFAULTS[key]
        value = self._values.get(key, default)
        if value is not default and not valid(value):
            log.warning("cluster_config %s has an invalid value; using the default", key)
            value = default
        return copy.deepcopy(value)

    # typed accessors ----------------------------------------------------------------------
    @property
    def freeswitch_nodes(self) -> list[FreeswitchNode]:
        """A node's own password when the operator stored one (switches with different
        secrets), else the one secret compose gives both FreeSWITCH and the controller."""
        default = get_settings().freeswitch_esl_password
        return [FreeswitchNode(n["host"], int(n["port"]), n.get("password") or default,
                               n.get("sip_host") or "", int(n.get("agent_sip_port", limits.AGENT_SIP_PORT)))
                for n in self.get("freeswitch.nodes")]

    @property
    def controller_listen(self) -> tuple[str, int]:
        v = self.get("controller.listen")
        return v["host"], int(v["port"])

    @property
    def controller_advertise_host(self) -> str:
        return self.get("controller.advertise_host")

    @property
    def webhook_vendor(self) -> str:
        return self.get("webhook.vendor")

    @property
    def webhook_first_reply_deadline_seconds(self) -> int:
        return self.get("webhook.first_reply_deadline_seconds")

    @property
    def recording_dir(self) -> str:
        return self.get("recording.dir")

    @property
    def moh_dir(self) -> str:
        return self.get("moh.dir")

    @property
    def limiter_slot_ttl_seconds(self) -> int:
        return self.get("limiter.slot_ttl_seconds")

    @property
    def limiter_refresh_seconds(self) -> int:
        return self.get("limiter.refresh_seconds")

    @property
    def heartbeat_interval_seconds(self) -> int:
        return self.get("heartbeat.interval_seconds")

    @property
    def outbox_retention_seconds(self) -> int:
        return self.get("events.outbox_retention_seconds")

    @property
    def health_controller_port(self) -> int:
        return self.get("health.controller_port")

    @property
    def health_workers_port(self) -> int:
        return self.get("health.workers_port")

    @property
    def transcription_engine(self) -> str:
        return self.get("transcription.engine")

    @property
    def whisper_model(self) -> str:
        return self.get("transcription.whisper_model")

    @property
    def vosk_model(self) -> str:
        return self.get("transcription.vosk_model")

    @property
    def transcription_workers(self) -> int:
        return self.get("transcription.workers")

    @property
    def transcription_threads(self) -> int:
        return self.get("transcription.threads")


def set_value(key: str, value: Any, *, announce: bool = True) -> None:
    """Store one key (platform path) and, in the same transaction, queue
    ``system.config.changed`` so every process reloads. Unknown keys and invalid values are
    refused here — the one place operators write."""
    from app.errors import ValidationFailed
    from app.events.exchanges import SYSTEM_EVENTS
    from app.events.outbox import publish_in
    from app.events.payloads import config_changed

    if key in REFUSED:
        raise ValidationFailed(f"{key} is not runtime configuration: {REFUSED[key]}",
                               code="config_key_not_runtime")
    if key not in DEFAULTS:
        raise ValidationFailed(f"unknown runtime configuration key {key!r}",
                               details={"known": sorted(DEFAULTS)})
    if not DEFAULTS[key][1](value):
        raise ValidationFailed(f"invalid value for {key}")
    with platform_session() as session:
        session.execute(
            pg_insert(ClusterConfig).values(key=key, value=value)
            .on_conflict_do_update(index_elements=[ClusterConfig.key], set_={"value": value})
        )
        if announce:
            publish_in(session, SYSTEM_EVENTS, "system.config.changed", config_changed([key]))


def unset_value(key: str, *, announce: bool = True) -> bool:
    """Remove a stored key so its default applies again (also removes a stored key that is no
    longer known, e.g. one ``REFUSED`` now). Returns whether a row was removed; announces
    ``system.config.changed`` only then."""
    from app.errors import ValidationFailed
    from app.events.exchanges import SYSTEM_EVENTS
    from app.events.outbox import publish_in
    from app.events.payloads import config_changed

    if not key or len(key) > 255:
        raise ValidationFailed("key must be 1-255 characters")
    with platform_session() as session:
        # a DELETE's result is a CursorResult (rowcount); Session.execute is typed as Result
        result = cast("CursorResult[Any]", session.execute(delete(ClusterConfig).where(ClusterConfig.key == key)))
        removed = result.rowcount > 0
        if removed and announce:
            publish_in(session, SYSTEM_EVENTS, "system.config.changed", config_changed([key]))
    return removed


def start_config_listener(config: RuntimeConfig, amqp_url: str | None = None):
    """Reload ``config`` whenever ``system.config.changed`` arrives; returns the running
    ``EventConsumer`` (call ``stop()`` at shutdown). The queue is exclusive: every process
    gets its own copy of the event."""
    from app.events.consumer import EventConsumer
    from app.events.exchanges import SYSTEM_EVENTS

    def handle(_envelope) -> None:
        config.reload()

    return EventConsumer([(SYSTEM_EVENTS, "system.config.changed")], handle, amqp_url=amqp_url).start()


_config: RuntimeConfig | None = None


def get_config() -> RuntimeConfig:
    """The process-wide snapshot, loaded on first use."""
    global _config
    if _config is None:
        _config = RuntimeConfig.load()
    return _config
