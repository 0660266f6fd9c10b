"""``sbc verbs validate`` / ``sbc verbs schema``: exit codes and what is printed."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from tests.verbs.fixtures import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_given_good_file_when_validated_then_exit_0_and_verbs_listed():
    result = run("verbs", "validate", str(FIXTURES / "good" / "ivr_gather_dtmf.json"))
    assert result.exit_code == 0
    assert result.output.startswith("accepted: 4 verb(s): say, gather, say, hangup")


def test_given_bad_stdin_when_validated_then_exit_1_and_each_error_with_index_and_field():
    reply = json.dumps([{"verb": "say"}, {"verb": "pause"}, {"verb": "dial", "target": [{"type": "phone", "name": "abc"}]}])
    result = run("verbs", "validate", "-", stdin=reply)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == "rejected: 2 error(s)"
    assert lines[1].startswith("  #0 say text: ")
    assert lines[2].startswith("  #2 dial target.0.name: ")


def test_given_verbs_after_handover_when_validated_then_exit_0_with_warning_lines():
    result = run("verbs", "validate", "-", stdin=json.dumps([{"verb": "record"}, {"verb": "hangup"}]))
    assert result.exit_code == 0
    assert "warning #1 hangup: Never runs: 'record' at index 0 ends the list." in result.output


def test_given_not_json_when_validated_then_exit_1_with_parse_position():
    result = run("verbs", "validate", "-", stdin="[{'verb': 'say'}]")
    assert result.exit_code == 1
    assert "not JSON" in result.output and "line 1" in result.output


def test_given_flow_option_when_validating_bad_flow_then_exit_1_with_node_and_field():
    flow = {"start": "a", "nodes": {"a": {"verb": {"verb": "say", "text": "x"}, "next": "zz"}}}
    result = run("verbs", "validate", "--flow", "-", stdin=json.dumps(flow))
    assert result.exit_code == 1
    assert "  a next: Refers to unknown node 'zz'." in result.output


def test_given_schema_command_when_run_then_prints_the_exported_json_schema():
    from app.verbs.jsonschema import verb_list_json_schema

    result = run("verbs", "schema")
    assert result.exit_code == 0
    assert json.loads(result.output) == json.loads(json.dumps(verb_list_json_schema()))


@pytest.mark.parametrize("reply,code", [('[{"verb":"pause"}]', 0), ('[{"verb":"pause","length":0}]', 1)])
def test_given_real_process_when_validating_stdin_then_process_exit_code_matches(reply, code):
    proc = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "verbs", "validate", "-"],
                          input=reply, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == code, proc.stderr
