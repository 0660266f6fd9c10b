"""Private Redis key space and RabbitMQ vhost per test run — real services, no doubles.

Redis: every key the product writes carries ``settings.redis_key_prefix`` (``sbc:<run>:`` in
tests), so the run's keys are deleted by prefix at the end and never collide with another run.

RabbitMQ: ``SBC_AMQP_URL`` names a vhost ``sbc_<run>``; ``amqp_vhost`` creates it with
``rabbitmqctl add_vhost`` and grants the ``guest`` user, and deletes it at the end (deleting a
vhost drops its exchanges, queues and connections). The fixture is opt-in because a
``rabbitmqctl`` call costs ~0.4 s; tests that talk to the broker request it.
"""
from __future__ import annotations

import contextlib
import shutil
import subprocess
from typing import Iterator
from urllib.parse import unquote, urlsplit

import pytest
import redis

from app.settings import get_settings
from tests.plugins.skips import skip_or_fail_in_ci


def amqp_vhost_name(url: str | None = None) -> str:
    path = urlsplit(url or get_settings().amqp_url).path
    return unquote(path[1:]) if len(path) > 1 else "/"


def rabbitmqctl(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("rabbitmqctl")
    if exe is None:
        skip_or_fail_in_ci("rabbitmqctl is not installed on this machine")
    return subprocess.run([exe, "-q", *args], capture_output=True, text=True, timeout=60)


def create_vhost(name: str) -> None:
    result = rabbitmqctl("add_vhost", name)
    if result.returncode != 0 and "already exists" not in (result.stderr + result.stdout):
        raise RuntimeError(f"rabbitmqctl add_vhost {name} failed: {result.stderr.strip()}")
    result = rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
    if result.returncode != 0:
        raise RuntimeError(f"rabbitmqctl set_permissions failed: {result.stderr.strip()}")


def delete_vhost(name: str) -> None:
    rabbitmqctl("delete_vhost", name)


def close_vhost_connections(name: str, reason: str = "test: simulated broker loss") -> int:
    """Close every client connection of ``name`` from the server side; returns how many."""
    listing = rabbitmqctl("list_connections", "pid", "vhost")
    closed = 0
    for line in listing.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].strip() == name:
            rabbitmqctl("close_connection", parts[0].strip(), reason)
            closed += 1
    return closed


@pytest.fixture(scope="session")
def amqp_vhost() -> Iterator[str]:
    """The run's vhost exists for the whole session; yields its name."""
    name = amqp_vhost_name()
    if name == "/":
        raise RuntimeError("refusing to use the default vhost in tests; set SBC_AMQP_URL")
    create_vhost(name)
    try:
        yield name
    finally:
        delete_vhost(name)


@pytest.fixture(scope="session", autouse=True)
def _redis_run_keys_removed() -> Iterator[None]:
    """Whatever wrote under the run's prefix (any helper's code), nothing survives the run."""
    yield
    settings = get_settings()
    client = redis.Redis.from_url(settings.redis_url)
    try:
        with contextlib.suppress(redis.RedisError):  # Redis unavailable: nothing could have been written either
            delete_prefixed_keys(client, settings.redis_key_prefix)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_client() -> Iterator[redis.Redis]:
    """A client on the shared Redis (keys under the run's prefix are removed at the end)."""
    client = redis.Redis.from_url(get_settings().redis_url)
    try:
        yield client
    finally:
        client.close()


def delete_prefixed_keys(client: redis.Redis, prefix: str) -> int:
    if not prefix or prefix in ("*", ":"):
        raise RuntimeError("refusing to delete keys without a run prefix")
    deleted = 0
    batch: list[bytes] = []
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            deleted += client.delete(*batch)
            batch.clear()
    if batch:
        deleted += client.delete(*batch)
    return deleted


@pytest.fixture()
def redis_prefix(redis_client: redis.Redis) -> str:
    return get_settings().redis_key_prefix
