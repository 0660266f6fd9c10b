"""Operations against the real switch: /readyz of the real processes (the controller's
module check asks the real FreeSWITCH), /metrics after real calls, ``sbc status`` reading the
real switch, and a concurrency limit raised with ``sbc tenant update`` after creation."""
from __future__ import annotations

import contextlib
import re
import subprocess
import sys

import requests
from click.testing import CliRunner

from app.cli import main
from app.config import RuntimeConfig
from tests.plugins.eventually import NotYet, eventually
from tests.realswitch.provision import create_tenant_with_trunk


def _ops_url(path: str, port: int) -> str:
    return f"http://127.0.0.1:{port}{path}"


def _sample(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = rf"^{re.escape(name)}{re.escape('{' + wanted + '}') if wanted else ''} (\S+)$"
    match = re.search(pattern, text, re.M)
    return float(match.group(1)) if match else 0.0


def _eventually_ready(url: str, timeout: float = 30.0) -> dict:
    """The /readyz body once it answers 200, else the last one (the test's assert shows it)."""
    with contextlib.suppress(NotYet):
        eventually(lambda: requests.get(url, timeout=10).status_code == 200, timeout=timeout,
                   interval=0.5, what=f"{url} ready")
    return requests.get(url, timeout=10).json()


def test_every_process_is_ready_and_the_controller_sees_the_real_switch_with_all_its_modules(product, real_switch):
    config = RuntimeConfig.load()
    controller = _eventually_ready(_ops_url("/readyz", config.health_controller_port))
    assert controller["status"] == "ready", controller
    node = f"127.0.0.1:{real_switch.ports.esl}"
    assert controller["checks"]["freeswitch"]["details"][node] == {"connected": True, "missingModules": []}
    assert _eventually_ready(product.url("/readyz"))["status"] == "ready"
    assert _eventually_ready(_ops_url("/readyz", config.health_workers_port))["status"] == "ready"


def test_real_calls_show_up_in_the_controllers_metrics(product, tenant, sipp):
    port = RuntimeConfig.load().health_controller_port
    before = requests.get(_ops_url("/metrics", port), timeout=10).text
    number = tenant.number_for([{"verb": "say", "text": "metrics"}, {"verb": "hangup"}])
    result = sipp.call(number, calls=2, rate=5)
    assert result.ok, result.errors
    tenant.wait_record(number, count=2)
    after = requests.get(_ops_url("/metrics", port), timeout=10).text
    labels = {"status": "completed", "direction": "inbound"}
    assert _sample(after, "sbc_calls_finished_total", **labels) == _sample(before, "sbc_calls_finished_total", **labels) + 2
    assert _sample(after, "sbc_call_setup_seconds_count") == _sample(before, "sbc_call_setup_seconds_count") + 2
    assert _sample(after, "sbc_esl_connected_switches") == 1
    assert _sample(after, "sbc_calls_in_progress", direction="inbound") == 0


def test_sbc_status_reads_the_real_switch(product, real_switch):
    result = CliRunner().invoke(main, ["status"])
    node = f"127.0.0.1:{real_switch.ports.esl}"
    line = next(l for l in result.output.splitlines() if l.strip().startswith(node))
    assert "connected  version 1.10.12" in line and "missing modules: none" in line, result.output
    assert re.search(r"^  controller\s+up ", result.output, re.M), result.output


def test_a_limit_raised_with_sbc_tenant_update_admits_the_second_call(product, owner_engine, sipp):
    limited = create_tenant_with_trunk(product, owner_engine, max_concurrent_calls=1)
    number = limited.number_for([{"verb": "pause", "length": 2}, {"verb": "hangup"}])
    assert sipp.call(number, calls=2, rate=20).statuses() == [503]
    update = subprocess.run([sys.executable, "-m", "app.cli", "tenant", "update", limited.subdomain,
                             "--max-concurrent-calls", "2"], capture_output=True, text=True, timeout=60)
    assert update.returncode == 0, update.stderr
    again = sipp.call(number, calls=2, rate=20)
    assert again.ok and again.statuses() == [], again.errors
