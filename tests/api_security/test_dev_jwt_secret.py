"""The built-in JWT secret is in the source: an API reachable from other hosts with it would let
anyone sign an admin token for any tenant. The Host header (and so SBC_BASE_DOMAIN) is the
client's to choose, so the guard looks at what the API listens on: loopback only, or refused."""
from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app import dev_mode
from app.api import app as api_app
from app.api import bind_guard
from app.settings import DEV_BASE_DOMAIN, DEV_JWT_SECRET, get_settings

ROOT = Path(__file__).resolve().parents[2]


def _settings(**changes):
    return dataclasses.replace(get_settings(), **changes)


def _assert_serves(app) -> None:
    """Started means serving: the app answers its liveness probe (the guard let it through)."""
    reply = app.test_client().get("/healthz")
    assert reply.status_code == 200
    assert reply.get_json()["status"] == "alive"


@pytest.fixture
def dev_secret(monkeypatch):
    monkeypatch.setattr(dev_mode, "get_settings", lambda: _settings(jwt_secret=DEV_JWT_SECRET,
                                                                       base_domain=DEV_BASE_DOMAIN))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "198.51.100.7", None])
def test_given_builtin_jwt_secret_when_listening_beyond_loopback_then_refused_even_on_localhost_domain(dev_secret, host):
    with pytest.raises(bind_guard.DevSecretExposed, match="SBC_JWT_SECRET"):
        api_app.create_app({"TESTING": True}, bind_host=host)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.53", "::1", "localhost"])
def test_given_builtin_jwt_secret_when_listening_on_loopback_only_then_starts(dev_secret, host):
    assert bind_guard.dev_secret_in_use()
    _assert_serves(api_app.create_app({"TESTING": True}, bind_host=host))


@pytest.mark.parametrize("host", ["0.0.0.0", None])
def test_given_own_jwt_secret_when_listening_anywhere_then_starts(monkeypatch, host):
    monkeypatch.setattr(dev_mode, "get_settings", lambda: _settings(jwt_secret="s3cret-" + "x" * 32,
                                                                       base_domain="sbc.example.com"))

    assert not bind_guard.dev_secret_in_use()
    _assert_serves(api_app.create_app({"TESTING": True}, bind_host=host))


def _sbc_api(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SBC_JWT_SECRET"}  # the built-in secret
    env.pop("SBC_API_HOST", None)
    return subprocess.run([sys.executable, "-m", "app.cli", "api", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_given_builtin_jwt_secret_when_sbc_api_asked_for_all_interfaces_then_exits_with_one_clear_line():
    result = _sbc_api("--host", "0.0.0.0", "--port", "1")

    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if "JWT secret" in line]
    assert len(lines) == 1 and "SBC_JWT_SECRET" in lines[0] and "loopback" in lines[0], result.stderr


def test_given_builtin_jwt_secret_when_sbc_api_has_no_host_then_it_listens_on_loopback_only():
    """What ``sbc run`` does (it passes no --host): the API binds 127.0.0.1 and says so."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("SBC_JWT_SECRET", "SBC_API_HOST")}
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "api", "--port", str(port)], cwd=ROOT,
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "listening on http" not in line:
            line = proc.stderr.readline()
            assert line, "sbc api exited before listening"
            if "development JWT secret" in line:
                notice = line
        assert "127.0.0.1 only" in notice
        assert f"http://127.0.0.1:{port}" in line
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_given_compose_when_read_then_the_api_needs_its_own_secret_and_the_guard_covers_its_bind():
    """Compose serves the API on 0.0.0.0, so it must never run with the built-in secret: the
    file refuses to start without SBC_JWT_SECRET, and set to the built-in value the guard
    refuses the bind."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    api = compose["services"]["api"]
    host = api["command"][api["command"].index("--host") + 1]
    assert api["environment"]["SBC_JWT_SECRET"].startswith("${SBC_JWT_SECRET:?")
    assert not bind_guard.is_loopback_only(host)
