"""docs/operations.md lists exactly the metrics the product exports (its Grafana list stays
true), and /metrics serves the text format on the API port without a tenant or a token."""
from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from app.ops import metrics
from app.ops.collectors import (
    DatabaseCollector,
    ErrorsCollector,
    GatewayRegistrationCollector,
    QueueCollector,
    RegistrationCollector,
    SwitchCollector,
)
from esl.inbound import InboundConnection

DOC = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()


def documented() -> set[str]:
    return set(re.findall(r"^\| `(sbc_\w+)` \|", DOC, re.M))


def exported() -> set[str]:
    registry = CollectorRegistry()
    for collector in (SwitchCollector(lambda: [InboundConnection("127.0.0.1", 1, "x")], dict),
                      QueueCollector(), DatabaseCollector(), RegistrationCollector(), GatewayRegistrationCollector(),
                      ErrorsCollector()):
        registry.register(collector)
    names = set(re.findall(r"^# TYPE (sbc_\w+) (\w+)", generate_latest(registry).decode(), re.M))
    own = {(m._name, m._type) for m in vars(metrics).values() if hasattr(m, "_type") and hasattr(m, "_name")}
    return {f"{name}_total" if kind == "counter" and not name.endswith("_total") else name
            for name, kind in names | own}


def test_the_documented_metric_list_is_exactly_what_the_product_exports(database):
    assert documented() == exported()


def test_given_the_api_when_metrics_is_scraped_then_prometheus_text_with_sbc_series(api_app):
    response = api_app.test_client().get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    assert "# TYPE sbc_webhook_attempts_total counter" in response.get_data(as_text=True)
