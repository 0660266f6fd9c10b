"""Running a node test suite (the agent SDK's, the console's) from a pytest test."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def run_in_own_group(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """``args`` in a process group of its own, its output (stdout and stderr) collected. On a
    timeout, or any interruption, the whole group is stopped: the node runner, the harnesses and
    browsers it started, and their product processes."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        raise
    return proc.returncode, output
