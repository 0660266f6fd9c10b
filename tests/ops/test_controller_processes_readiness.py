"""``sbc controller --processes 2`` is ready as one: the command's own /readyz (on
``health.controller_port``) answers 200 only when both children answer ready on theirs, and
lists each child's pid, state and checks. A real ``sbc controller`` against the ESL simulator,
real PostgreSQL/Redis/RabbitMQ."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.faults.processes import cluster_config, free_port, free_port_block, start_sbc, stop
from tests.ops.ops_http import get_json
from tests.plugins.eventually import eventually

PROCESSES = 2
START_SECONDS = 90  # two controllers starting on a shared 2-core machine


def _answer(port: int, path: str) -> tuple[int, dict] | None:
    try:
        return get_json(port, path)
    except OSError:  # not listening yet
        return None


def _child_pids(parent: int) -> dict[int, int]:
    """process index -> pid of ``sbc controller --processes N``'s children."""
    found = {}
    for task in Path(f"/proc/{parent}/task").iterdir():
        for pid in (task / "children").read_text().split():
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"--process-index" in argv:
                found[int(argv[argv.index(b"--process-index") + 1])] = int(pid)
    return found


@pytest.fixture
def controller_processes(inbound_sim, amqp_vhost, tmp_path):
    """``sbc controller --processes 2``: (its pid, the configured health port)."""
    host, esl_port = inbound_sim.address
    base = free_port_block(1 + PROCESSES)  # the supervisor's port, then one per child
    with cluster_config({"freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
                         "controller.listen": {"host": "127.0.0.1", "port": free_port()},
                         "health.controller_port": base}):
        proc = start_sbc("controller", "--processes", str(PROCESSES), log_path=tmp_path / "controller.log",
                         env={"SBC_FS_GENERATED_DIR": str(tmp_path)})
        try:
            yield proc, base
        finally:
            stop(proc)


def _ready(port: int):
    answer = _answer(port, "/readyz")
    assert answer and answer[0] == 200, answer  # eventually() reports the last answer
    return answer


def test_given_controller_processes_when_all_children_are_ready_then_the_commands_readyz_is_200_listing_each(
        controller_processes):
    proc, base = controller_processes
    status, body = eventually(lambda: _ready(base), timeout=START_SECONDS, interval=0.5,
                              what="sbc controller --processes 2 ready on health.controller_port")
    pids = _child_pids(proc.pid)
    assert body["status"] == "ready" and body["processes"] == PROCESSES and body["ready"] == PROCESSES
    assert body["pid"] == proc.pid, "the supervising process answers on the configured port"
    assert [(c["index"], c["pid"], c["status"]) for c in body["children"]] == \
        [(i, pids[i], "ready") for i in range(PROCESSES)]
    for child in body["children"]:
        assert child["checks"]["routing"]["status"] == "ok"
        assert child["checks"]["routing"]["details"]["applied"] >= 1
        # each child keeps its own listener, one port above the supervisor's per index
        own_status, own = get_json(base + 1 + child["index"], "/readyz")
        assert (own_status, own["pid"]) == (200, child["pid"])
    assert [c["pid"] for c in get_json(base, "/healthz")[1]["children"]] == [pids[i] for i in range(PROCESSES)]


def test_given_controller_processes_when_one_child_stops_answering_then_the_commands_readyz_is_503_naming_it(
        controller_processes):
    proc, base = controller_processes
    eventually(lambda: _ready(base), timeout=START_SECONDS, interval=0.5,
               what="sbc controller --processes 2 ready")
    frozen = _child_pids(proc.pid)[1]
    os.kill(frozen, signal.SIGSTOP)
    try:
        status, body = get_json(base, "/readyz")
    finally:
        os.kill(frozen, signal.SIGCONT)
    assert status == 503 and body["status"] == "not_ready" and body["ready"] == 1
    states = {c["index"]: c for c in body["children"]}
    assert states[0]["status"] == "ready"
    assert states[1]["status"] == "unreachable" and states[1]["pid"] == frozen
    assert "timed out" in states[1]["error"], states[1]
    eventually(lambda: _ready(base), timeout=30, interval=0.5, what="ready again after SIGCONT")
