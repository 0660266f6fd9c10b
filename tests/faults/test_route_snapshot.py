"""The number snapshot: the database answers first (always fresh), what it answered is kept for
an outage, a removed number is forgotten, recently called numbers are warmed at start."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import delete, text

from app.calls.route_snapshot import RouteSnapshot, RouteUnavailable, recently_called_numbers
from app.db.engine import platform_session, tenant_session
from app.models import PhoneNumber
from tests.plugins.database import unique_number


def test_given_a_number_removed_while_the_database_is_up_when_looked_up_then_it_is_forgotten(
        number_with_app):
    account, number, _ = number_with_app(app_json=[{"verb": "hangup"}])
    snapshot = RouteSnapshot()
    assert snapshot.find(number).account_id == account.id
    with tenant_session(account.id) as session:
        session.execute(delete(PhoneNumber).where(PhoneNumber.number == number))
    assert snapshot.find(number) is None, "the database answers first"
    assert number not in snapshot.remembered()


def test_given_remembered_numbers_when_refreshed_then_removed_ones_are_dropped(number_with_app):
    _, kept, _ = number_with_app(app_json=[{"verb": "hangup"}])
    _, removed, _ = number_with_app(app_json=[{"verb": "hangup"}])
    snapshot = RouteSnapshot()
    snapshot.find(kept), snapshot.find(removed)
    with platform_session() as session:  # removed belongs to another account
        session.execute(delete(PhoneNumber).where(PhoneNumber.number == removed))
    assert snapshot.refresh(snapshot.remembered()) == 2
    assert snapshot.remembered() == [kept]


def test_given_the_database_failing_when_a_number_is_unknown_to_the_snapshot_then_route_unavailable():
    from sqlalchemy.exc import OperationalError
    calls = []

    def away(number):
        calls.append(number)
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    snapshot = RouteSnapshot(away, retry_after=60)
    with pytest.raises(RouteUnavailable):
        snapshot.find("4930123")
    with pytest.raises(RouteUnavailable):
        snapshot.find("4930123")
    assert calls == ["4930123"], "after a failure calls skip the database for retry_after"


def test_given_inbound_calls_recorded_when_warming_then_their_numbers_are_listed(owner_conn, make_account):
    account = make_account()
    number = unique_number()
    owner_conn.execute(text(
        "INSERT INTO call_records (public_id, account_id, trace_id, call_id, direction, to_number, "
        "started_at, ended_at, status, tags) VALUES (:p, :a, :t, :c, 'inbound', :n, now(), now(), "
        "'completed', '{}')"), {"p": uuid.uuid4(), "a": account.id, "t": uuid.uuid4(),
                                 "c": uuid.uuid4(), "n": number})
    owner_conn.commit()
    assert number in recently_called_numbers()
