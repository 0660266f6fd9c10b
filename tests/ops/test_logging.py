"""Log lines name their process and pid (under ``sbc run`` the children share one stderr), and
``SBC_LOG_FORMAT=json`` gives one JSON object per line. Run as real ``sbc`` sub-processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.plugins.eventually import eventually

CODE = ("import logging, click\n"
        "from app.logging_setup import configure_logging\n"
        "@click.group()\n"
        "def sbc():\n"
        "    pass\n"
        "@sbc.command('controller')\n"
        "def main():\n"
        "    configure_logging()\n"
        "    logging.getLogger('esl.test').info('hello %s', 'there')\n"
        "    try:\n"
        "        1 / 0\n"
        "    except ZeroDivisionError:\n"
        "        logging.getLogger('esl.test').exception('boom')\n"
        "sbc(['controller'])\n")


def _run(fmt: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SBC_LOG_FORMAT": fmt}
    return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=60)


def test_given_text_logs_then_each_line_names_the_sub_command_and_pid():
    result = _run("text")
    first = result.stderr.splitlines()[0]
    assert " controller[" in first and "] INFO esl.test hello there" in first
    pid = int(first.split("controller[", 1)[1].split("]", 1)[0])
    assert pid > 0 and pid != os.getpid()


def test_given_json_logs_then_each_line_is_one_object_with_process_pid_and_traceback():
    result = _run("json")
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert [(l["process"], l["level"], l["logger"], l["message"]) for l in lines] == [
        ("controller", "INFO", "esl.test", "hello there"), ("controller", "ERROR", "esl.test", "boom")]
    assert lines[0]["pid"] > 0 and "ZeroDivisionError" in lines[1]["exc"]
    assert len(result.stderr.strip().splitlines()) == 2  # the traceback stays inside its line


def test_given_an_unknown_log_format_then_the_process_refuses_to_start():
    result = _run("xml")
    assert result.returncode != 0 and "SBC_LOG_FORMAT must be one of text, json" in result.stderr


def test_given_sbc_api_when_a_request_is_served_then_its_access_line_names_the_process(tmp_path):
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "api.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "api", "--host", "127.0.0.1", "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
    try:
        def answers() -> bool:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            except OSError:
                return False
            return True

        eventually(answers, timeout=30, interval=0.2, what="sbc api answering /healthz")
    finally:
        proc.terminate()
        proc.wait(15)
    access = [line for line in log.read_text().splitlines() if "GET /healthz" in line]
    assert access and f"api[{proc.pid}] INFO sbc.access" in access[0], log.read_text()
