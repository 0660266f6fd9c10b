"""``scripts/freeswitch-dev`` (the development switch): its work folder belongs to the clone it
runs from (two clones never share or wipe one folder), and it says where the switch listens and
where its log is (``info``, and before it starts)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _info(clone: Path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FS_", "SBC_FREESWITCH_"))}
    result = subprocess.run(["bash", str(clone / "scripts" / "freeswitch-dev"), "info"], capture_output=True,
                            text=True, env={**clean, **env}, timeout=30, check=True)
    return result.stdout


def test_given_two_clones_then_each_has_its_own_work_folder_inside_it(tmp_path):
    other = tmp_path / "other-clone"
    (other / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "freeswitch-dev", other / "scripts" / "freeswitch-dev")
    mine, theirs = _info(ROOT), _info(other)
    assert f"work folder {ROOT}/build/freeswitch-dev\n" in mine
    assert f"work folder {other}/build/freeswitch-dev\n" in theirs
    assert subprocess.run(["git", "check-ignore", "-q", "build/freeswitch-dev/log"], cwd=ROOT).returncode == 0


def test_info_prints_the_ports_and_the_log_file_with_overrides_applied():
    out = _info(ROOT, FS_SIP_PORT="5090", FS_ESL_PORT="8031")
    assert "SIP (trunks, external profile)  127.0.0.1:5090" in out
    assert "SIP (agents, internal profile)  127.0.0.1:5070" in out
    assert "ESL                             127.0.0.1:8031" in out
    assert "controller's outbound socket    127.0.0.1:8084" in out
    assert f"log                             {ROOT}/build/freeswitch-dev/log/freeswitch.log" in out
