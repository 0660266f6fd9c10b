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

from tests.faults.processes import free_port_block
from tests.plugins.eventually import NotYet, eventually
from tests.realswitch.freeswitch import RealSwitch, free_port

START_TIMEOUT_SECONDS = 30.0
HEALTH_PORT_CHILDREN = 8  # ports kept free above health.controller_port: the most --processes a run uses (benchmarks/realswitch_bench.py)


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
                "recording.dir", "moh.dir", "health.controller_port", "health.workers_port")


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
    set_value("moh.dir", str(switch.workdir / "moh"), announce=False)
    # health/metrics listeners: free ports, so runs in parallel never collide; the
    # controller's is a block (``--processes N`` children listen on base + 1 + i)
    set_value("health.controller_port", free_port_block(1 + HEALTH_PORT_CHILDREN), announce=False)
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
        # logging to the one controller log, each applying every routing change; the command
        # is ready when all of them are (its /readyz: app/ops/children.py)
        self.controller_processes = int(env.get("SBC_CONTROLLER_PROCESSES") or 1)
        self.controller_ready_seconds: float | None = None  # last start -> all N processes ready
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
        started = time.monotonic()
        if not self.controller.alive():
            self.controller.start()
        if wait and not wait_for_port(self.switch.ports.controller):
            raise RuntimeError(f"sbc controller never listened\n{self.controller.log_tail()}")
        if wait:
            self.wait_controller_ready(self.start_timeout)
            self.controller_ready_seconds = time.monotonic() - started

    @property
    def start_timeout(self) -> float:
        """Each controller process compiles routing and links to the switch at start; N of
        them share the machine's cores."""
        return START_TIMEOUT_SECONDS + 10.0 * (self.controller_processes - 1)

    def wait_for_log(self, proc: ProductProcess, text: str, timeout: float) -> bool:
        try:
            return eventually(lambda: text in proc.log_text(), timeout=timeout, interval=0.1)
        except NotYet:
            return False

    def media_consumers(self) -> int:
        """Consumers of the media workers' job queue (``sbc workers``' ``sbc media-worker``
        children declare it when they start): a recording completed before the first one did,
        on this run's fresh vhost, has no queue to land in."""
        import pika

        from app.events.publisher import connection_parameters
        from app.media.worker import QUEUE

        conn = pika.BlockingConnection(connection_parameters(self.env["SBC_AMQP_URL"]))
        try:
            return conn.channel().queue_declare(QUEUE, passive=True).method.consumer_count
        except pika.exceptions.ChannelClosedByBroker:  # not declared yet
            return 0
        finally:
            if conn.is_open:
                conn.close()

    def wait_media_workers(self, timeout: float = START_TIMEOUT_SECONDS) -> int:
        """Wait until a media worker consumes its job queue; how many do."""
        return eventually(self.media_consumers, timeout=timeout, interval=0.2,
                          what="a media worker consuming media.transcription")

    OPS_LISTENING = re.compile(
        r"(controller|controller-supervisor): /healthz /readyz /metrics on http://([\d.]+):(\d+)")
    READYZ_POLL_SECONDS = 0.5  # each answer runs every process's dependency checks

    def controller_ops_url(self) -> str | None:
        """Where ``sbc controller`` answers /readyz for all its processes: the supervisor's
        listener under ``--processes N`` (N > 1), else the lone controller's. From its log:
        the configuration may have moved on since it started."""
        label = "controller-supervisor" if self.controller_processes > 1 else "controller"
        bound = [(host, port) for name, host, port in self.OPS_LISTENING.findall(self.controller.log_text())
                 if name == label]
        return f"http://{bound[-1][0]}:{bound[-1][1]}" if bound else None

    def controller_states(self) -> list[dict[str, Any]] | None:
        """Every controller process's readiness, ``[{"index", "pid", "status", "checks"}]``
        (app/ops/children.py), from the command's /readyz; None while it does not answer."""
        url = self.controller_ops_url()
        if url is None:
            return None
        try:
            body = requests.get(f"{url}/readyz", timeout=10).json()
        except (requests.RequestException, ValueError):
            return None
        if "children" in body:
            return body["children"]
        return [{"index": 0, "pid": body.get("pid"), "status": body.get("status"),
                 "url": url, "checks": body.get("checks", {})}]

    def controller_ops_urls(self) -> list[str]:
        """The health/metrics address of each controller process (metrics are per process)."""
        return [state["url"] for state in self.controller_states() or []]

    def wait_controller_ready(self, timeout: float) -> list[dict[str, Any]]:
        """All N controller processes ready (the command's /readyz is 200 only then), not
        only those that have started so far."""
        last: list[Any] = []

        def all_ready() -> list[dict[str, Any]] | None:
            last[:] = [self.controller_states()]
            states = last[0]
            if states and len(states) == self.controller_processes and \
                    all(s["status"] == "ready" for s in states):
                return states
            return None
        try:
            states = eventually(all_ready, timeout=timeout, interval=self.READYZ_POLL_SECONDS,
                                what=f"all {self.controller_processes} controller process(es) ready")
        except NotYet as exc:
            raise AssertionError(f"{exc}\nlast /readyz: {_brief(last[0] if last else None)}\n"
                                 f"{self.controller.log_tail()}") from None
        return states

    def routing_applied(self) -> dict[int, tuple[int, int]] | None:
        """process index -> (pid, routing configurations applied) once every one of the N
        controller processes has its routing listener bound and caught up; else None."""
        states = self.controller_states()
        if not states or len(states) != self.controller_processes:
            return None
        if any(s.get("checks", {}).get("routing", {}).get("status") != "ok" for s in states):
            return None
        return {s["index"]: (s["pid"], s["checks"]["routing"]["details"]["applied"]) for s in states}

    def wait_routing_ready(self, timeout: float) -> dict[int, tuple[int, int]]:
        """Every controller process's routing listener is bound and caught up (/readyz's
        ``routing`` check), all N of them: from then on each routing write reaches each
        process as one event and one apply. A process that starts after a write instead loads
        the new state at start and applies nothing more, so it must be up before the writes."""
        try:
            return eventually(self.routing_applied, timeout=timeout, interval=self.READYZ_POLL_SECONDS,
                              what=f"routing ready in all {self.controller_processes} controller process(es)")
        except NotYet as exc:
            raise AssertionError(f"{exc}\nlast /readyz: {_brief(self.controller_states())}\n"
                                 f"{self.controller.log_tail()}") from None

    @contextmanager
    def routing_changes(self, writes: int, timeout: float = 30.0) -> Iterator[None]:
        """Around API writes of routing rows (carrier, gateway, LCR plan/route/carrier entry,
        agent): each commits one routing.config.changed, and every controller process applies
        each once; after the block wait until each process's ``applied`` (its /readyz routing
        check) grew by ``writes`` — then the last write is in every snapshot and on the switch.
        Counted per process and pid, so a process restarted meanwhile (its count starts over,
        and whether its start-up load came after the last write cannot be told) is an error
        naming it rather than a miscount."""
        before = self.wait_routing_ready(timeout)
        yield
        now: dict[int, tuple[int, int]] = {}

        def applied_everywhere() -> bool:
            current = self.routing_applied()
            if current is None:
                return False
            now.clear()
            now.update(current)
            for index, (pid, applied) in before.items():
                if current[index][0] != pid:
                    raise RuntimeError(f"controller process {index} restarted during the routing "
                                       f"writes (pid {pid} -> {current[index][0]})\n"
                                       f"{self.controller.log_tail()}")
            return all(now[i][1] >= applied + writes for i, (_, applied) in before.items())
        try:
            eventually(applied_everywhere, timeout=timeout, interval=self.READYZ_POLL_SECONDS / 2,
                       what=f"{writes} routing change(s) applied by each controller process")
        except NotYet:
            counts = ", ".join(f"process {i}: {now[i][1] - applied if i in now else '?'}"
                               for i, (_, applied) in sorted(before.items()))
            raise AssertionError(
                f"controller processes applied {counts} of {writes} routing changes in "
                f"{timeout}s\n{self.controller.log_tail()}") from None

    def stop(self) -> None:
        for proc in self.processes:
            proc.stop()
        unconfigure_cluster()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.api_port}{path}"

    def client(self, subdomain: str, username: str, password: str) -> "ApiSession":
        return ApiSession(self, subdomain).login(username, password)


def _brief(states: list[dict[str, Any]] | None) -> str:
    """Each process's state and its failing checks, for a failure message."""
    if not states:
        return "no answer"
    return "; ".join(f"{s.get('index')}: {s.get('status')} "
                     + ",".join(name for name, c in (s.get("checks") or {}).items() if c.get("status") != "ok")
                     + (f" {s['error']}" if s.get("error") else "")
                     for s in states)


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
