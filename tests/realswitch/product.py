"""The product as an operator runs it: ``sbc api``, ``sbc controller`` and ``sbc workers`` as
separate processes against the run's PostgreSQL database, Redis prefix and RabbitMQ vhost,
wired to the real switch only through ``cluster_config`` and documented environment variables.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import requests

from tests.plugins.eventually import NotYet, eventually
from tests.realswitch.freeswitch import RealSwitch, free_port

START_TIMEOUT_SECONDS = 30.0


def wait_for_port(port: int, timeout: float = START_TIMEOUT_SECONDS) -> bool:
    def listening() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    try:
        return eventually(listening, timeout=timeout, interval=0.1)
    except NotYet:
        return False


CLUSTER_KEYS = ("freeswitch.nodes", "controller.listen", "controller.advertise_host",
                "recording.dir", "health.controller_port", "health.workers_port")


def unconfigure_cluster() -> None:
    """Back to the defaults, so the suites after this one see the run's database as before."""
    from app.config import unset_value

    for key in CLUSTER_KEYS:
        unset_value(key, announce=False)


def configure_cluster(switch: RealSwitch) -> None:
    """The runtime configuration an operator sets with ``sbc config set`` (docs/trunks.md)."""
    from app.config import set_value

    set_value("freeswitch.nodes", [{"host": "127.0.0.1", "port": switch.ports.esl,
                                    "password": switch.password}], announce=False)
    set_value("controller.listen", {"host": "127.0.0.1", "port": switch.ports.controller},
              announce=False)
    set_value("controller.advertise_host", "127.0.0.1", announce=False)
    set_value("recording.dir", str(switch.recordings), announce=False)
    # health/metrics listeners: free ports, so runs in parallel never collide
    set_value("health.controller_port", free_port(), announce=False)
    set_value("health.workers_port", free_port(), announce=False)


class ProductProcess:
    """One ``sbc <name>`` child with its output in ``<logdir>/<name>.log``."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name = name
        self.args = args
        self.env = env
        self.log_path = logdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> "ProductProcess":
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", *self.args],
                                     env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     cwd=str(Path(__file__).resolve().parents[2]))
        log.close()
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
        if not self.alive():
            return
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


class Product:
    """API + controller + workers for one real switch."""

    def __init__(self, switch: RealSwitch, logdir: Path) -> None:
        self.switch = switch
        self.logdir = logdir
        self.api_port = free_port()
        env = dict(os.environ)
        env.update({
            "SBC_FS_GENERATED_DIR": str(switch.generated_dir),
            "SBC_BASE_DOMAIN": "localhost",
            "SBC_LOG_LEVEL": os.environ.get("SBC_LOG_LEVEL", "INFO"),
            "PYTHONUNBUFFERED": "1",
        })
        self.env = env
        # ``sbc controller`` runs this many siblings (benchmarks: --controller-processes), all
        # logging to the one controller log and each applying every routing change
        self.controller_processes = int(env.get("SBC_CONTROLLER_PROCESSES") or 1)
        self.api = ProductProcess("api", ["api", "--host", "127.0.0.1", "--port",
                                          str(self.api_port), "--no-access-log"], env, logdir)
        self.controller = ProductProcess("controller", ["controller"], env, logdir)
        self.workers = ProductProcess("workers", ["workers"], env, logdir)

    @property
    def processes(self) -> list[ProductProcess]:
        return [self.api, self.controller, self.workers]

    def start(self) -> None:
        configure_cluster(self.switch)
        for proc in self.processes:
            proc.start()
        if not wait_for_port(self.api_port):
            raise RuntimeError(f"sbc api never listened\n{self.api.log_tail()}")
        self.start_controller(wait=True)

    def start_controller(self, *, wait: bool) -> None:
        if not self.controller.alive():
            self.controller.start()
        if wait and not wait_for_port(self.switch.ports.controller):
            raise RuntimeError(f"sbc controller never listened\n{self.controller.log_tail()}")
        if wait:
            self.wait_for_log(self.controller, "inbound ESL connected to", START_TIMEOUT_SECONDS)

    def wait_for_log(self, proc: ProductProcess, text: str, timeout: float) -> bool:
        try:
            return eventually(lambda: text in proc.log_text(), timeout=timeout, interval=0.1)
        except NotYet:
            return False

    ROUTING_APPLIED = "routing: configuration applied"
    OPS_LISTENING = re.compile(r"controller: /healthz /readyz /metrics on http://([\d.]+):(\d+)")

    def routing_applied_count(self) -> int:
        return self.controller.log_text().count(self.ROUTING_APPLIED)

    def controller_ops_urls(self) -> list[str]:
        """The health/metrics address each running controller process bound (its log says;
        the configuration may have moved on since it started)."""
        bound = self.OPS_LISTENING.findall(self.controller.log_text())
        return [f"http://{host}:{port}" for host, port in bound[-self.controller_processes:]]

    def wait_routing_ready(self, timeout: float) -> None:
        """Every controller process's routing listener is bound and caught up (/readyz's
        ``routing`` check). From then on each routing write reaches each process as one event
        and one apply, so counting applies is exact; before it, the catch-up at bind may fold
        several writes into one apply."""
        deadline = time.monotonic() + timeout
        for url in self.controller_ops_urls():
            while True:
                try:
                    checks = requests.get(f"{url}/readyz", timeout=5).json()["checks"]
                    if checks["routing"]["status"] == "ok":
                        break
                except (requests.RequestException, ValueError, KeyError):
                    checks = None
                if time.monotonic() > deadline:
                    raise AssertionError(f"controller at {url}: routing never ready ({checks})\n"
                                         f"{self.controller.log_tail()}")
                time.sleep(0.1)

    @contextmanager
    def routing_changes(self, writes: int, timeout: float = 30.0) -> Iterator[None]:
        """Around API writes of routing rows (carrier, gateway, LCR plan/route/carrier entry,
        agent): each commits one routing.config.changed and the controller applies each once,
        so after the block wait until ``writes`` more have been applied — then the last write
        is in the controller's snapshot and on the switch."""
        self.wait_routing_ready(timeout)
        before = self.routing_applied_count()
        yield
        applies = writes * self.controller_processes  # each sibling applies each change
        try:
            eventually(lambda: self.routing_applied_count() >= before + applies, timeout=timeout,
                       interval=0.1)
        except NotYet:
            raise AssertionError(
                f"controller applied {self.routing_applied_count() - before} of {applies} "
                f"routing changes in {timeout}s\n{self.controller.log_tail()}") from None

    def stop(self) -> None:
        for proc in self.processes:
            proc.stop()
        unconfigure_cluster()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.api_port}{path}"

    def client(self, subdomain: str, username: str, password: str) -> "ApiSession":
        return ApiSession(self, subdomain).login(username, password)


class ApiError(AssertionError):
    """The API answered with a status the test did not expect (message carries the body)."""


class ApiSession:
    """A tenant admin talking HTTP to the real ``sbc api`` process (Host picks the tenant)."""

    def __init__(self, product: Product, subdomain: str) -> None:
        self.product = product
        self.http = requests.Session()
        self.http.headers["Host"] = f"{subdomain}.localhost"

    def login(self, username: str, password: str) -> "ApiSession":
        body = self.request("POST", "/auth/login", json={"username": username,
                                                         "password": password})
        self.http.headers["Authorization"] = f"Bearer {body['token']}"
        return self

    def request(self, method: str, path: str, *, expect: int | tuple[int, ...] = (200, 201, 202),
                **kwargs: Any) -> Any:
        response = self.http.request(method, self.product.url(path), timeout=15, **kwargs)
        wanted = (expect,) if isinstance(expect, int) else expect
        if response.status_code not in wanted:
            raise ApiError(f"{method} {path} -> {response.status_code}: {response.text[:500]}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    def post(self, path: str, body: Any, **kwargs: Any) -> Any:
        return self.request("POST", path, json=body, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, **kwargs)

    def put(self, path: str, body: Any, **kwargs: Any) -> Any:
        return self.request("PUT", path, json=body, **kwargs)

    def patch(self, path: str, body: Any, **kwargs: Any) -> Any:
        return self.request("PATCH", path, json=body, **kwargs)
