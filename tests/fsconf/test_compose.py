"""docker-compose.yml and Dockerfile, checked by reading (Docker is not runnable here)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def test_given_compose_when_parsed_then_the_stack_of_the_design_is_there():
    assert {"postgres", "redis", "rabbitmq", "freeswitch", "api", "controller", "workers"} <= set(SERVICES)


def test_given_compose_then_our_services_use_the_prebuilt_image_and_never_build_or_pull():
    for name in ("api", "controller", "workers", "migrate"):
        service = SERVICES[name]
        assert service["image"].startswith("saas-sbc:"), name
        assert service.get("pull_policy") == "never", name
        assert "build" not in service, name


def test_given_compose_then_public_images_are_pinned_to_a_version():
    for name in ("postgres", "redis", "rabbitmq"):
        image = SERVICES[name]["image"]
        assert re.search(r":\d+\.\d+", image), image


def test_given_compose_then_every_depends_on_uses_a_condition_that_exists():
    for name, service in SERVICES.items():
        for dep, spec in (service.get("depends_on") or {}).items():
            assert dep in SERVICES, (name, dep)
            assert spec["condition"] in ("service_healthy", "service_started", "service_completed_successfully")
            if spec["condition"] == "service_healthy":
                assert "healthcheck" in SERVICES[dep], (name, dep)


def test_given_compose_then_freeswitch_mounts_the_shipped_config_and_the_generated_volume():
    fs = SERVICES["freeswitch"]
    mounts = {v.split(":")[1]: v for v in fs["volumes"]}
    assert mounts["/usr/local/freeswitch/conf"].startswith("./fs-conf:")
    assert mounts["/usr/local/freeswitch/conf/dialplan"].startswith("./dialplan:")
    assert mounts["/usr/local/freeswitch/conf/generated"].startswith("fs-generated:")
    assert (ROOT / "fs-conf" / "generated").is_dir() and (ROOT / "fs-conf" / "dialplan").is_dir()
    controller = SERVICES["controller"]
    generated = next(v for v in controller["volumes"] if v.startswith("fs-generated:"))
    assert generated.split(":")[1] == controller["environment"]["SBC_FS_GENERATED_DIR"]
    assert "fs-generated" in COMPOSE["volumes"]


def test_given_compose_then_sip_rtp_and_esl_are_reachable_as_configured():
    # host network for media + signalling; ESL and the controller socket share loopback
    assert SERVICES["freeswitch"]["network_mode"] == "host"
    assert SERVICES["controller"]["network_mode"] == "host"
    vars_xml = (ROOT / "fs-conf" / "vars.xml").read_text()
    assert 'data="controller_host=127.0.0.1"' in vars_xml
    assert SERVICES["freeswitch"]["environment"]["SBC_CONTROLLER_HOST"] == "127.0.0.1"
    # the data services the host-networked controller needs are published on loopback only
    for name, port in (("postgres", 5432), ("redis", 6379), ("rabbitmq", 5672)):
        assert f"127.0.0.1:{port}:{port}" in SERVICES[name]["ports"]


def test_given_compose_then_secrets_come_from_the_environment_and_are_required():
    text = (ROOT / "docker-compose.yml").read_text()
    for name in ("FS_ESL_PASSWORD", "POSTGRES_PASSWORD", "SBC_JWT_SECRET", "SBC_SECRET_KEY", "RABBITMQ_PASSWORD"):
        assert "${" + name + ":?" in text, name
    assert "ClueCon" not in text


def test_given_dockerfile_then_it_installs_pinned_deps_at_build_time_only():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11" in dockerfile
    assert "pip install" in dockerfile and "-e ." in dockerfile
    assert "COPY migrations" in dockerfile and "alembic.ini" in dockerfile
    cmd_lines = [line for line in dockerfile.splitlines() if line.startswith(("CMD", "ENTRYPOINT"))]
    assert all("pip" not in line and "curl" not in line for line in cmd_lines)


def test_given_compose_then_commands_are_real_sbc_subcommands_and_recordings_are_shared():
    from app.cli import main

    for name in ("api", "controller", "workers", "migrate"):
        command = SERVICES[name]["command"]
        assert command[0] == "sbc"
        assert command[1] in main.commands, (name, command)
    from app.config import DEFAULTS

    recording_dir = DEFAULTS["recording.dir"][0]
    for name in ("freeswitch", "workers"):
        assert f"recordings:{recording_dir}" in SERVICES[name]["volumes"], name
