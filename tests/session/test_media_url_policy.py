"""Media URLs FreeSWITCH would fetch for the customer (play, gather's play prompt, listen) are
checked when the verb runs, with the webhook address policy: a webhook reply naming an internal
address is never handed to FreeSWITCH; the call ends like a failed application (apology or the
app_json fallback), with ``webhook_error = media_url_refused:<class>`` on the call record and
``call.failed`` published."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, executed, outbox_keys
from tests.simulator import Call

INTERNAL = [
    ("https://10.0.0.5/a.wav", "private"),
    ("https://internal.example.com/a.wav", "private"),
    ("https://169.254.169.254/latest/meta-data/", "metadata"),
    ("https://metadata.example.com/x.wav", "metadata"),
    ("https://[::ffff:192.168.1.1]/a.wav", "private"),
    ("https://[fe80::1]/a.wav", "link_local"),
]


def _wait(call, timeout: float = 10.0) -> None:
    assert call.wait(timeout), "simulated call did not finish"


def _fetched(call, url: str) -> bool:
    return any(url in arg for _app, arg in executed(call))


def _failed_reason(owner_conn, trace_id) -> str:
    row = owner_conn.execute(text(
        "SELECT body FROM event_outbox WHERE body->>'trace_id' = :t AND routing_key = 'call.failed'"),
        {"t": str(trace_id)}).scalar()
    body = row if isinstance(row, dict) else json.loads(row)
    return json.dumps(body)


@pytest.mark.parametrize(("url", "label"), INTERNAL, ids=[i[1] + str(n) for n, i in enumerate(INTERNAL)])
def test_given_webhook_reply_playing_an_internal_url_when_executed_then_refused_and_recorded(
        controller, simulate_call, hook_server, number_with_app, owner_conn, url, label):
    hook_server.reply(Reply.json([{"verb": "say", "text": "first"}, {"verb": "play", "url": url}]))
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    _wait(call)

    assert not _fetched(call, url)
    assert ("speak", "flite|kal|first") in executed(call)
    assert any(app == "speak" and "sorry" in arg for app, arg in executed(call))
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == f"media_url_refused:{label}"
    assert "call.failed" in outbox_keys(owner_conn, record["trace_id"])
    assert f"media_url_refused:{label}" in _failed_reason(owner_conn, record["trace_id"])


def test_given_gather_prompt_on_an_internal_url_when_executed_then_refused_before_any_prompt(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    url = "https://10.1.2.3/menu.wav"
    hook_server.reply(Reply.json([{"verb": "gather", "play": {"url": url},
                                   "actionHook": hook_server.url("/menu")}]))
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number).press("1#"), controller)
    _wait(call)

    assert not _fetched(call, url)
    assert all(app != "play_and_get_digits" for app, _arg in executed(call))
    assert call_record(owner_conn, call.uuid)["webhook_error"] == "media_url_refused:private"
    assert len(hook_server.requests) == 1  # the actionHook was never reached


def test_given_listen_to_an_internal_websocket_when_executed_then_no_audio_fork(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply.json([{"verb": "listen", "url": "wss://192.168.0.10/audio"}]))
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    _wait(call)

    assert not any("uuid_audio_fork" in c.line for c in call.commands)
    assert call_record(owner_conn, call.uuid)["webhook_error"] == "media_url_refused:private"


def test_given_refused_media_in_a_reply_when_app_json_exists_then_app_json_is_the_fallback(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply.json([{"verb": "play", "url": "https://10.0.0.5/a.wav"}]))
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"),
                                          app_json=[{"verb": "say", "text": "Fallback script"}])

    call = simulate_call(Call(callee=number), controller)
    _wait(call)

    assert ("speak", "flite|kal|Fallback script") in executed(call)
    assert call_record(owner_conn, call.uuid)["webhook_error"] == "media_url_refused:private"


def test_given_public_media_url_when_executed_then_played(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    url = "https://media.example.com/a.wav"
    hook_server.reply(Reply.json([{"verb": "play", "url": url}]))
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    _wait(call)

    assert ("playback", f"http_cache://{url}") in executed(call)
    assert call_record(owner_conn, call.uuid)["webhook_error"] is None
