"""Readiness of ``sbc controller --processes N`` as one service: the supervising process serves
``/readyz`` on ``health.controller_port`` and answers 200 only when each of its N children
answers 200 on its own listener, listing every child's state.

Why: an orchestrator (compose's health check, a load balancer, the real-switch harness) asks
one address whether "the controller" is ready. Before this, that address was child 0's own
listener: ready while children 1..N-1 were still starting, so a routing change written then
reached only the children already bound, and a benchmark counting applies saw 10 of 16.

A child counts as ready only when its listener answers 200 *and* reports the pid the
supervisor started (a stale process on the port is not our child). Children are probed
concurrently, each bounded by ``limits.CHILD_READINESS_TIMEOUT_SECONDS``.
"""
from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import gevent

from app import limits

READY, NOT_READY, UNREACHABLE, RESTARTING = "ready", "not_ready", "unreachable", "restarting"


def child_ops_port(base: int, index: int, processes: int) -> int:
    """The ops port of controller process ``index`` of ``processes``: the configured port
    itself for a lone controller; with several, the supervisor keeps the configured port (the
    aggregated /readyz) and child ``i`` listens on ``base + 1 + i``. 0 (off) stays 0."""
    if not base:
        return 0
    return base if processes <= 1 else base + 1 + index


@dataclass(frozen=True)
class ChildView:
    """What the supervisor knows of one child: its name, index, where its ops listener is,
    and the pid it started (None while the child waits for a restart)."""
    name: str
    index: int
    url: str
    pid: Optional[int]
    restarts: int = 0


class ChildrenReadiness:
    """The ``Readiness`` interface (``process``, ``liveness()``, ``readiness()``) over the
    children's own /readyz, for app.ops.http.OpsEndpoints."""

    def __init__(self, process: str, children: Callable[[], Sequence[ChildView]], *,
                 timeout: float = limits.CHILD_READINESS_TIMEOUT_SECONDS) -> None:
        self.process = process
        self.children = children
        self.timeout = timeout
        self.started = time.monotonic()

    def liveness(self) -> dict[str, Any]:
        return {"status": "alive", "process": self.process, "pid": os.getpid(),
                "uptimeSeconds": round(time.monotonic() - self.started, 1),
                "children": [{"name": c.name, "index": c.index, "pid": c.pid,
                              "restarts": c.restarts} for c in self.children()]}

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        views = list(self.children())
        jobs = [gevent.spawn(self._probe, view) for view in views]
        gevent.joinall(jobs)
        states = [job.get() for job in jobs]  # _probe answers every failure as a state
        ready_count = sum(1 for s in states if s["status"] == READY)
        ready = bool(states) and ready_count == len(states)
        return ready, {"status": READY if ready else NOT_READY, "process": self.process,
                       "pid": os.getpid(), "processes": len(states), "ready": ready_count,
                       "children": states}

    def _probe(self, view: ChildView) -> dict[str, Any]:
        state: dict[str, Any] = {"name": view.name, "index": view.index, "pid": view.pid,
                                 "url": view.url, "restarts": view.restarts}
        if view.pid is None:
            return {**state, "status": RESTARTING}
        try:
            code, body = _get_json(f"{view.url}/readyz", self.timeout)
        except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, timed out, cut short, not JSON
            return {**state, "status": UNREACHABLE, "error": _describe(exc)}
        if not isinstance(body, dict):
            return {**state, "status": UNREACHABLE, "error": f"answered a JSON {type(body).__name__}, not an object"}
        if body.get("pid") != view.pid:
            return {**state, "status": UNREACHABLE,
                    "error": f"port answered by pid {body.get('pid')}, not this child"}
        status = READY if code == 200 and body.get("status") == READY else NOT_READY
        return {**state, "status": status, "checks": body.get("checks", {})}


def _get_json(url: str, timeout: float) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:  # 503: the body says which check fails
        with exc:
            return exc.code, json.loads(exc.read())


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__
