"""PostgreSQL away for a few seconds: calls to known numbers are still admitted and served, their
records and events are held and written once it is back; a number the snapshot does not know is
refused cleanly (SIP 503, call.failed database_unavailable). The product's database traffic goes
through a TCP relay the test cuts; the real PostgreSQL is never stopped."""
from __future__ import annotations

import dataclasses
import logging
import time

import pytest
from sqlalchemy import make_url, text

from app.calls.route_snapshot import RouteSnapshot
from app.db import engine as db_engine
from app.settings import get_settings
from tests.events.tcp_proxy import TcpProxy
from tests.faults.processes import wait_for
from tests.session.conftest import call_record, hangups, outbox_keys
from tests.simulator import Call

SAY = [{"verb": "say", "text": "still here"}]
OUTAGE_SECONDS = 12.0


def _through(url: str, port: int) -> str:
    return make_url(url).set(host="127.0.0.1", port=port).render_as_string(hide_password=False)


@pytest.fixture
def database_relay(monkeypatch):
    """Every product session (tenant and platform roles) goes through a relay to PostgreSQL."""
    settings = get_settings()
    target = make_url(settings.platform_database_url)
    proxy = TcpProxy((target.host or "127.0.0.1", target.port or 5432)).start()
    relayed = dataclasses.replace(
        settings, app_database_url=_through(settings.app_database_url, proxy.port),
        platform_database_url=_through(settings.platform_database_url, proxy.port))
    db_engine.reset_engines()
    with monkeypatch.context() as patch:
        patch.setattr(db_engine, "get_settings", lambda: relayed)
        yield proxy
        proxy.heal()
        db_engine.reset_engines()
    db_engine.reset_engines()
    proxy.stop()


def _errors(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno >= logging.ERROR]


def test_given_postgresql_away_when_calls_arrive_then_known_numbers_are_served_and_recorded_once_it_is_back(
        controller, services, simulate_call, number_with_app, owner_conn, database_relay, caplog):
    caplog.set_level(logging.INFO)
    snapshot = RouteSnapshot()
    services.find_route = snapshot.find
    account, known, _ = number_with_app(app_json=SAY)
    _, unseen, _ = number_with_app(app_json=SAY)
    warm = simulate_call(Call(callee=known), controller)
    assert warm.wait(10) and call_record(owner_conn, warm.uuid)["status"] == "completed"

    database_relay.refuse()
    database_relay.reset()
    cut_at = time.monotonic()
    during = [simulate_call(Call(callee=known), controller) for _ in range(5)]
    refused = simulate_call(Call(callee=unseen), controller)
    wait_for(lambda: all(any(c.app == "speak" for c in call.commands) for call in during), 10,
             "calls to a known number served during the outage")
    wait_for(lambda: hangups(refused), 10, "the unknown number refused")
    assert hangups(refused) == ["NORMAL_TEMPORARY_FAILURE"]  # SIP 503: the carrier fails over
    assert not any(c.app == "speak" for c in refused.commands)
    assert all(call_record(owner_conn, call.uuid) is None for call in during), "the database is away"

    # longer than a session waits for its events (10 s): the records themselves must be held
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - cut_at)))  # scenario: the outage's length
    assert {call.uuid for call in during} <= services.records.held_call_ids
    healed = time.monotonic()
    database_relay.heal()
    wait_for(lambda: all(call_record(owner_conn, call.uuid) for call in during), 30,
             "held records written")
    print(f"\nPostgreSQL back after {healed - cut_at:.1f}s -> {len(during)} held records written in "
          f"{time.monotonic() - healed:.2f}s; {len(during)}/{len(during)} calls to the known number "
          f"admitted during the outage")
    for call in during:
        record = call_record(owner_conn, call.uuid)
        assert record["status"] == "completed" and record["account_id"] == account.id
        keys = outbox_keys(owner_conn, record["trace_id"])
        assert keys[0] == "call.started" and keys[-1] == "call.ended", keys
    wait_for(lambda: owner_conn.execute(text(
        "SELECT count(*) FROM event_outbox WHERE routing_key = 'call.failed' "
        "AND body->'payload'->>'callId' = :c AND body->'payload'->>'reason' = 'database_unavailable'"),
        {"c": refused.uuid}).scalar() == 1, 20, "the refusal's call.failed in the outbox")
    for call in (*during, refused, warm):
        call.wait(15)
    assert len(_errors(caplog, "app.calls.route_snapshot")) == 1, "the outage is logged once"
    assert len(_errors(caplog, "app.calls.record_backlog")) <= 1
    assert len(_errors(caplog, "app.voice.call_events")) == 1, "the event writer logs the outage once"
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.ERROR
                and r.name.startswith(("esl", "app.calls"))], "no traceback per call"
    after = simulate_call(Call(callee=known), controller)  # looked up in the database again
    assert after.wait(10) and call_record(owner_conn, after.uuid)["status"] == "completed"
    assert not snapshot.outage.down and snapshot.outage.last_duration >= OUTAGE_SECONDS - 1
    assert not [m for m in _errors(caplog, "app.voice.call_events") if "events not in the outbox" in m]
