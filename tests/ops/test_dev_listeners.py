"""In development (the built-in development JWT secret) the API serves loopback only
(app/api/bind_guard.py); the controller's outbound-socket port and the controller's and
workers' /metrics listeners follow the same rule: their wildcard default becomes 127.0.0.1.
With a real secret they keep binding every interface; an explicit address is kept."""
from __future__ import annotations

import socket

import pytest

from app.config import RuntimeConfig
from app.dev_mode import listen_host
from app.ops.runtime import WorkersRuntime
from app.settings import DEV_JWT_SECRET, get_settings
from app.voice.controller import Controller


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def development(monkeypatch):
    monkeypatch.setenv("SBC_SECRET_KEY", get_settings().secret_key)  # encrypted rows stay readable
    monkeypatch.setenv("SBC_JWT_SECRET", DEV_JWT_SECRET)
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


def test_given_development_mode_then_wildcard_binds_become_loopback_and_explicit_ones_stay(development):
    assert listen_host("0.0.0.0") == "127.0.0.1" and listen_host("::") == "127.0.0.1"
    assert listen_host("192.0.2.7") == "192.0.2.7"


def test_given_a_real_secret_then_wildcard_binds_stay():
    assert listen_host("0.0.0.0") == "0.0.0.0"


def test_given_development_mode_when_the_controller_starts_with_the_default_listen_then_both_its_ports_are_loopback(
        development, inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    host, esl_port = inbound_sim.address
    ctl = Controller(RuntimeConfig({
        "freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
        "controller.listen": {"host": "0.0.0.0", "port": 0}, "health.controller_port": _free_port()}))
    try:
        ctl.start()
        assert ctl.server.address[0] == "127.0.0.1"
        assert ctl.ops_server is not None and ctl.ops_server.address[0] == "127.0.0.1"
    finally:
        ctl.stop()


def test_given_development_mode_when_the_workers_start_then_their_metrics_listener_is_loopback(development, amqp_vhost):
    runtime = WorkersRuntime(RuntimeConfig({"health.workers_port": _free_port()})).start()
    try:
        assert runtime.ops_server is not None and runtime.ops_server.address[0] == "127.0.0.1"
    finally:
        runtime.stop()
