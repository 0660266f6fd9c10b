"""Every Prometheus metric of the product, defined once (names are documented in
docs/operations.md; tests/ops check that both lists agree).

Instrumented code calls these objects directly (a counter increment costs about a microsecond:
benchmarks/metrics_bench.py measures it on the call path). Values that already exist elsewhere
(live calls, ESL links, outbox rows, agents) are not mirrored into gauges: collectors in
``app.ops.collectors`` read them when Prometheus scrapes.

Each process (api, controller, workers) serves its own registry on its own port, so no
cross-process aggregation is needed. A deployment that runs several processes behind one port
(e.g. gunicorn workers for the API) sets ``PROMETHEUS_MULTIPROC_DIR``: prometheus-client then
keeps values in per-process files and ``render()`` merges them (gauges below say how).
"""
from __future__ import annotations

import os
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import REGISTRY as DEFAULT_REGISTRY

NAMESPACE = "sbc"

# Call setup (outbound socket connect → call admitted and handed to its application): route
# lookup, carrier check and limiter. Buckets from 1 ms: on this path a millisecond matters.
SETUP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
WEBHOOK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

CALLS_IN_PROGRESS = Gauge(
    "sbc_calls_in_progress", "Calls this controller is driving (admitted, not yet ended).",
    ["direction"], multiprocess_mode="livesum")
CALLS_FINISHED = Counter(
    "sbc_calls_finished_total", "Call records written, by final status and direction.",
    ["status", "direction"])
CALL_SETUP_SECONDS = Histogram(
    "sbc_call_setup_seconds", "Outbound socket connect to the call admitted and handed to its "
    "application (number lookup, carrier check, limiter).", buckets=SETUP_BUCKETS)
WEBHOOK_ATTEMPT_SECONDS = Histogram(
    "sbc_webhook_request_seconds", "Duration of one webhook HTTP attempt, by purpose.",
    ["purpose"], buckets=WEBHOOK_BUCKETS)
WEBHOOK_OUTCOMES = Counter(
    "sbc_webhook_attempts_total", "Webhook HTTP attempts by purpose and outcome ('ok' or the "
    "failure reason: timeout, connection_error, http_status, invalid_json, ...).",
    ["purpose", "outcome"])
LIMITER_REFUSALS = Counter(
    "sbc_limiter_refusals_total", "Calls refused by the concurrency limiter, by the scope "
    "that was full.", ["scope"])
LCR_DECISIONS = Counter(
    "sbc_lcr_decisions_total", "Least-cost routing decisions on the call path: 'routed' or "
    "'no_route' (a miss).", ["result"])


class _Waiters:
    """Callers waiting in a queue verb on this controller: call id → monotonic join time."""

    def __init__(self) -> None:
        self._joined: dict[str, float] = {}

    def join(self, call_id: str) -> None:
        self._joined[call_id] = time.monotonic()

    def leave(self, call_id: str) -> None:
        self._joined.pop(call_id, None)

    def snapshot(self) -> tuple[int, float]:
        """(waiting, longest wait in seconds)."""
        if not self._joined:
            return 0, 0.0
        return len(self._joined), time.monotonic() - min(self._joined.values())


QUEUE_WAITERS = _Waiters()


def observe_call_setup(connected_at_us: int) -> None:
    """``connected_at_us``: wall-clock microseconds of the socket connect (CallSession)."""
    CALL_SETUP_SECONDS.observe(max(0.0, time.time() - connected_at_us / 1_000_000))


def render(registry: CollectorRegistry | None = None) -> tuple[bytes, str]:
    """The text exposition of this process (or of all processes in multi-process mode)."""
    if registry is None and os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry or DEFAULT_REGISTRY), CONTENT_TYPE_LATEST
