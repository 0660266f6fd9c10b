"""What the workers process runs besides its work: the outbox relay, the service heartbeat, the
runtime-configuration listener, and /healthz /readyz /metrics on ``health.workers_port``.
Heartbeat interval and outbox retention are read from cluster_config at each use, so ``sbc
config set`` changes them without a restart."""
from __future__ import annotations

import contextlib
from typing import Optional

from prometheus_client import REGISTRY

from app.calls.heartbeat import ServiceHeartbeat
from app.config import RuntimeConfig, get_config, start_config_listener
from app.dev_mode import listen_host
from app.events.publisher import start_publisher, stop_publisher
from app.ops.collectors import (
    DatabaseCollector,
    ErrorsCollector,
    GatewayRegistrationCollector,
    RegistrationCollector,
)
from app.ops.health import Readiness, dependency_checks
from app.ops.http import OpsEndpoints, start_ops_server
from app.settings import get_settings

WORKERS_HOST = "0.0.0.0"  # loopback in development mode (app.dev_mode)


class WorkersRuntime:
    def __init__(self, config: Optional[RuntimeConfig] = None) -> None:
        self.config = config or get_config()
        self.readiness = Readiness("workers", dependency_checks(get_settings()))
        self.collectors = [DatabaseCollector(), RegistrationCollector(), GatewayRegistrationCollector(),
                           ErrorsCollector()]
        self.heartbeat = ServiceHeartbeat(
            "workers", interval_seconds=lambda: self.config.heartbeat_interval_seconds)
        self._listener = None
        self.ops_server = None

    def start(self) -> "WorkersRuntime":
        start_publisher(retention_seconds=lambda: self.config.outbox_retention_seconds)
        self._listener = start_config_listener(self.config)
        self.heartbeat.start()
        for collector in self.collectors:
            REGISTRY.register(collector)
        self.ops_server = start_ops_server(OpsEndpoints(self.readiness), listen_host(WORKERS_HOST),
                                           self.config.health_workers_port)
        return self

    def stop(self) -> None:
        if self.ops_server is not None:
            self.ops_server.stop(timeout=1)
        for collector in self.collectors:
            with contextlib.suppress(KeyError):
                REGISTRY.unregister(collector)
        self.heartbeat.stop()
        if self._listener is not None:
            self._listener.stop()
        stop_publisher()
