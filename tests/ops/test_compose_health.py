"""docker-compose's health checks ask each process's /readyz on the port it really serves it
on (Docker is not runnable here: checked by reading, against the defaults in app/limits.py)."""
from __future__ import annotations

from pathlib import Path

import yaml

from app import limits

SERVICES = yaml.safe_load((Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text())["services"]


def test_given_compose_then_api_controller_and_workers_health_checks_use_readyz_on_their_ports():
    ports = {"api": 8080, "controller": limits.HEALTH_CONTROLLER_PORT, "workers": limits.HEALTH_WORKERS_PORT}
    assert "--port" in SERVICES["api"]["command"] and "8080" in SERVICES["api"]["command"]
    for name, port in ports.items():
        test = " ".join(SERVICES[name]["healthcheck"]["test"])
        assert f"http://127.0.0.1:{port}/readyz" in test, name
