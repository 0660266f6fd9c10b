"""docker-compose restarts every long-running service that fails (read, Docker is not runnable here)."""
from __future__ import annotations

from tests.fsconf.test_compose import SERVICES

RESTARTING = ("unless-stopped", "always", "on-failure")


def test_given_compose_then_every_long_running_service_restarts_on_failure():
    for name, service in SERVICES.items():
        if name == "migrate":  # a one-shot job: compose must not loop it
            assert service.get("restart") == "no"
            continue
        assert str(service.get("restart", "")).split(":")[0] in RESTARTING, name
