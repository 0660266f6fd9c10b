"""Deployment shape of the media pipeline, checked by reading (Docker is not runnable here)."""
from __future__ import annotations

import yaml

from app.config import DEFAULTS
from tests.media.conftest import REPO


def test_api_workers_and_switch_share_the_recording_volume_at_recording_dir():
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    recording_dir = DEFAULTS["recording.dir"][0]
    assert f"recordings:{recording_dir}:ro" in services["api"]["volumes"]  # streams, never writes
    for name in ("freeswitch", "workers"):
        assert f"recordings:{recording_dir}" in services[name]["volumes"], name


def test_image_bakes_models_at_build_time_and_checks_them():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "ARG WHISPER_MODEL=" in dockerfile and "ARG WHISPER_MODEL_SHA256=" in dockerfile
    assert "COPY models/ /opt/sbc-models/" in dockerfile
    assert "sha256sum -c" in dockerfile
    run_time = [line for line in dockerfile.splitlines() if line.startswith(("CMD", "ENTRYPOINT"))]
    assert all("curl" not in line and "wget" not in line for line in run_time)
    assert (REPO / "models" / "README.md").is_file()
