"""RuntimeConfig from the real cluster_config table, reloaded over the real bus."""
from __future__ import annotations

import pytest
from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.config import DEFAULTS, RuntimeConfig, set_value, start_config_listener
from app.db.engine import platform_session
from app.errors import ValidationFailed
from app.events.publisher import OutboxPublisher
from app.models import ClusterConfig
from tests.plugins.eventually import eventually


@pytest.fixture()
def clean_config():
    def wipe():
        with platform_session() as s:
            s.execute(delete(ClusterConfig))
    wipe()
    yield
    wipe()


def store(key, value):
    with platform_session() as s:
        s.execute(pg_insert(ClusterConfig).values(key=key, value=value)
                  .on_conflict_do_update(index_elements=[ClusterConfig.key], set_={"value": value}))


def test_given_empty_cluster_config_when_loaded_then_documented_defaults(clean_config):
    config = RuntimeConfig.load()
    assert config.controller_listen == ("0.0.0.0", 8084)
    assert config.limiter_slot_ttl_seconds == 90
    assert (config.health_controller_port, config.health_workers_port) == (8085, 8086)
    assert [(n.host, n.port) for n in config.freeswitch_nodes] == [("127.0.0.1", 8021)]
    assert config.webhook_vendor == "saas-sbc"


def test_given_stored_values_when_loaded_then_typed_accessors_return_them(clean_config):
    store("freeswitch.nodes", [{"host": "fs1", "port": 8021, "password": "s3cret"},
                               {"host": "fs2", "port": 8022, "password": "other"}])
    store("controller.listen", {"host": "10.0.0.5", "port": 9084})
    store("recording.dir", "/data/rec")
    config = RuntimeConfig.load()
    nodes = config.freeswitch_nodes
    assert [(n.host, n.port, n.password) for n in nodes] == [("fs1", 8021, "s3cret"), ("fs2", 8022, "other")]
    assert "s3cret" not in repr(nodes)
    assert config.controller_listen == ("10.0.0.5", 9084)
    assert config.recording_dir == "/data/rec"


@pytest.fixture()
def esl_password_env(monkeypatch):
    """FS_ESL_PASSWORD as compose passes it, with settings read afresh (they are read once)."""
    from app.settings import get_settings

    monkeypatch.setenv("FS_ESL_PASSWORD", "from-compose")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


def test_given_fs_esl_password_when_a_node_has_no_password_then_the_controller_logs_in_with_it(
        clean_config, esl_password_env):
    assert RuntimeConfig.load().freeswitch_nodes[0].password == "from-compose"  # the default node
    store("freeswitch.nodes", [{"host": "fs1", "port": 8021},
                               {"host": "fs2", "port": 8021, "password": "its-own"}])
    nodes = RuntimeConfig.load().freeswitch_nodes
    assert [n.password for n in nodes] == ["from-compose", "its-own"]


def test_given_no_fs_esl_password_when_a_node_has_no_password_then_freeswitch_default_is_used(
        clean_config, monkeypatch):
    from app.settings import get_settings

    monkeypatch.delenv("FS_ESL_PASSWORD", raising=False)
    get_settings.cache_clear()
    try:
        assert RuntimeConfig.load().freeswitch_nodes[0].password == "ClueCon"
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def test_given_invalid_stored_value_when_read_then_default_is_used(clean_config):
    store("limiter.slot_ttl_seconds", "ninety")
    store("controller.listen", {"host": "x"})
    config = RuntimeConfig.load()
    assert config.limiter_slot_ttl_seconds == DEFAULTS["limiter.slot_ttl_seconds"][0]
    assert config.controller_listen == ("0.0.0.0", 8084)


def test_given_unknown_key_or_bad_value_when_set_then_validation_failed(clean_config):
    with pytest.raises(ValidationFailed):
        set_value("no.such.key", 1)
    with pytest.raises(ValidationFailed):
        set_value("limiter.slot_ttl_seconds", -5)


def test_given_accessor_result_mutated_then_snapshot_unchanged(clean_config):
    config = RuntimeConfig.load()
    config.get("freeswitch.nodes").append({"host": "evil", "port": 1})
    assert len(config.freeswitch_nodes) == 1


@pytest.mark.usefixtures("amqp_vhost")
def test_given_listener_running_when_config_changed_event_published_then_config_reloads(clean_config):
    publisher = OutboxPublisher(poll_seconds=0.2).start()
    config = RuntimeConfig.load()
    seen = []
    config.on_reload(lambda c: seen.append(c.limiter_slot_ttl_seconds))
    listener = start_config_listener(config)
    try:
        assert listener.ready.wait(10)
        assert config.limiter_slot_ttl_seconds == 90
        set_value("limiter.slot_ttl_seconds", 120)  # stores and announces in one transaction
        eventually(lambda: config.limiter_slot_ttl_seconds == 120, timeout=10,
                   what="config reloaded to the announced value")
        assert seen and seen[-1] == 120
    finally:
        listener.stop()
        publisher.stop()


def test_given_cli_when_setting_and_listing_then_values_stored_announced_and_passwords_masked(clean_config):
    from click.testing import CliRunner
    from sqlalchemy import select

    from app.cli import main
    from app.models import EventOutbox

    runner = CliRunner()
    nodes = '[{"host": "fs1", "port": 8021, "password": "topsecret"}]'
    result = runner.invoke(main, ["config", "set", "freeswitch.nodes", nodes])
    assert result.exit_code == 0, result.output
    listing = runner.invoke(main, ["config", "list"])
    assert listing.exit_code == 0
    assert "topsecret" not in listing.output
    assert '* freeswitch.nodes = [{"host": "fs1", "port": 8021, "password": "***"}]' in listing.output
    assert "  controller.listen = " in listing.output  # default, not stored
    assert runner.invoke(main, ["config", "get", "limiter.slot_ttl_seconds"]).output.strip() == "90"
    with platform_session() as s:
        announced = s.execute(select(EventOutbox.body).where(
            EventOutbox.routing_key == "system.config.changed")).scalars().all()
    assert {"keys": ["freeswitch.nodes"]} in [b["payload"] for b in announced]


def test_given_cli_with_bad_input_then_clear_error_and_exit_1(clean_config):
    from click.testing import CliRunner

    from app.cli import main

    runner = CliRunner()
    bad_json = runner.invoke(main, ["config", "set", "recording.dir", "/not-json"])
    assert bad_json.exit_code == 1 and "value must be JSON" in bad_json.output
    unknown = runner.invoke(main, ["config", "set", "nope", "1"])
    assert unknown.exit_code == 1 and "unknown runtime configuration key" in unknown.output
    invalid = runner.invoke(main, ["config", "set", "limiter.slot_ttl_seconds", "0"])
    assert invalid.exit_code == 1 and "invalid value" in invalid.output
    assert runner.invoke(main, ["config", "get", "nope"]).exit_code == 1


def test_given_keys_that_are_not_runtime_configuration_when_set_then_refused_naming_where_they_live(clean_config):
    with pytest.raises(ValidationFailed) as info:
        set_value("token.lifetime_seconds", 600)
    assert info.value.code == "config_key_not_runtime" and "SBC_TOKEN_LIFETIME_SECONDS" in info.value.message
    with pytest.raises(ValidationFailed) as info:
        set_value("gateway.ping_seconds", 10)
    assert "GATEWAY_PING_SECONDS" in info.value.message
    assert "token.lifetime_seconds" not in RuntimeConfig.load().stored_keys()


def test_every_runtime_key_is_read_by_the_product():
    """A key nothing reads would be stored and silently ignored: each key's accessor (or the
    key itself) is used outside app/config.py; names that are not runtime configuration are
    REFUSED instead."""
    import inspect
    import re
    from pathlib import Path

    from app.config import REFUSED

    root = Path(__file__).resolve().parents[2]
    sources = "\n".join(p.read_text() for d in ("app", "esl") for p in (root / d).rglob("*.py")
                        if p != root / "app" / "config.py")
    accessors = {}
    for name, member in inspect.getmembers(RuntimeConfig, lambda m: isinstance(m, property)):
        match = re.search(r'self\.get\("([^"]+)"\)', inspect.getsource(member.fget))
        if match:
            accessors[match.group(1)] = name
    assert not set(REFUSED) & set(DEFAULTS)
    def read(key: str) -> bool:  # through its accessor, or by name (config.get("key"))
        return (key in accessors and re.search(rf"\.{accessors[key]}\b", sources) is not None) \
            or f'"{key}"' in sources

    unread = [key for key in DEFAULTS if not read(key)]
    assert unread == []


def test_given_a_stored_key_when_unset_then_the_default_applies_and_the_change_is_announced(clean_config):
    from click.testing import CliRunner
    from sqlalchemy import select

    from app.cli import main
    from app.models import EventOutbox

    runner = CliRunner()
    assert runner.invoke(main, ["config", "set", "limiter.refresh_seconds", "12"]).exit_code == 0
    assert RuntimeConfig.load().limiter_refresh_seconds == 12
    result = runner.invoke(main, ["config", "unset", "limiter.refresh_seconds"])
    assert result.exit_code == 0, result.output
    assert RuntimeConfig.load().limiter_refresh_seconds == DEFAULTS["limiter.refresh_seconds"][0]
    with platform_session() as s:
        announced = [b["payload"] for b in s.execute(select(EventOutbox.body).where(
            EventOutbox.routing_key == "system.config.changed")).scalars()]
    assert announced.count({"keys": ["limiter.refresh_seconds"]}) == 2  # set, then unset
    again = runner.invoke(main, ["config", "unset", "limiter.refresh_seconds"])
    assert again.exit_code == 1 and "not stored" in again.output


def test_given_a_stored_key_nothing_reads_when_listed_then_it_is_flagged_and_can_be_unset(clean_config):
    from click.testing import CliRunner

    from app.cli import main

    store("token.lifetime_seconds", 600)  # stored before this release refused it
    runner = CliRunner()
    listing = runner.invoke(main, ["config", "list"]).output
    assert "! token.lifetime_seconds is stored but ignored (the token lifetime is the API process's" in listing
    assert runner.invoke(main, ["config", "unset", "token.lifetime_seconds"]).exit_code == 0
    assert "token.lifetime_seconds" not in runner.invoke(main, ["config", "list"]).output
