"""The agent SDK's browser, led from Python: the example page served by
``sdk/agent-js/examples/serve.js`` and Debian's chromium driven by
``sdk/agent-js/test-browser/driver.js`` (playwright-core), one JSON line per step. Used by the
real-switch test (tests/realswitch/test_agent_sdk_browser.py) and the benchmark
(benchmarks/agent_sdk_bench.py), which place the sipp calls the browser agent takes."""
from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.plugins.eventually import NotYet, eventually

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk" / "agent-js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def missing_reason() -> str | None:
    """Why the browser test cannot run here (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (bash scripts/install-system)"
    if not Path(CHROMIUM).exists():
        return f"chromium is not installed at {CHROMIUM} (bash scripts/install-system)"
    if not (SDK / "node_modules" / "playwright-core").is_dir():
        return "sdk/agent-js has no node_modules (bash scripts/install runs npm ci)"
    return None


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.3).close()
        return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ExampleServer:
    """``node examples/serve.js``: the example page and /sdk.js, /auth and /api proxied to the API."""

    def __init__(self, api_port: int, logdir: Path) -> None:
        self.port = _free_port()
        self.log = logdir / "example-server.log"
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                ["node", "examples/serve.js", "--api", f"http://127.0.0.1:{api_port}", "--port", str(self.port)],
                cwd=SDK, stdout=out, stderr=subprocess.STDOUT)
        try:
            eventually(lambda: _listening(self.port), timeout=30, interval=0.1,
                       what=f"example server listening on {self.port}")
        except NotYet:
            self.stop()
            raise RuntimeError(f"example server never listened:\n{self.log.read_text(errors='replace')}") from None

    def url(self, subdomain: str) -> str:
        return f"http://{subdomain}.localhost:{self.port}/"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class BrowserAgent:
    """One chromium logged in as an agent on the example page (driver.js)."""

    def __init__(self, page_url: str, user: str, password: str, *, sip: dict[str, str] | None,
                 wss_url: str | None, logdir: Path, deny_microphone: bool = False) -> None:
        env = dict(os.environ, SDK_PAGE_URL=page_url, SDK_AGENT_USER=user, SDK_AGENT_PASSWORD=password,
                   CHROMIUM=CHROMIUM, SDK_DENY_MICROPHONE="1" if deny_microphone else "0")
        if sip:
            env.update(SDK_SIP_USER=sip["sip_username"], SDK_SIP_PASSWORD=sip["sip_password"],
                       SDK_SIP_WSS=wss_url or "")
        self.stderr = open(logdir / f"browser-{user}.log", "ab")
        self.proc = subprocess.Popen(["node", "test-browser/driver.js"], cwd=SDK, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def expect(self, event: str, timeout: float = 90.0) -> dict[str, Any]:
        """The driver's next answer, which must be ``event``."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"browser: no '{event}' within {timeout}s") from None
        if not line:
            raise AssertionError(f"browser driver exited ({self.proc.poll()}) before '{event}'")
        answer = json.loads(line)
        if answer.get("event") != event:
            raise AssertionError(f"browser: expected '{event}', got {answer}")
        return answer

    def command(self, cmd: str, event: str, timeout: float = 90.0, **args: Any) -> dict[str, Any]:
        """Send ``cmd`` (with ``args``, e.g. ``agentId`` for ``consult``) and wait for its answer."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        return self.expect(event, timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.close()  # EOF too: an open stdin keeps node running after `quit`
                self.proc.wait(20)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
        self.stderr.close()
