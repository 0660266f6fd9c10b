"""The pure campaign rules: state machine, E.164 numbers and their zones, the calling window
in the contact's local time, retries per outcome, CSV reading."""
from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

import pytest

from app.campaigns import csv_rows, numbers, retries, states
from app.campaigns.window import CallingWindow

UTC = timezone.utc
WEEKDAYS = frozenset(range(1, 6))
DEFAULT = CallingWindow(time(8), time(21), frozenset(range(1, 8)))


@pytest.mark.parametrize(("action", "current", "target"), [
    ("start", "draft", "running"), ("schedule", "draft", "scheduled"), ("begin", "scheduled", "running"),
    ("pause", "running", "paused"), ("resume", "paused", "running"), ("stop", "paused", "completed"),
    ("finish", "running", "completed"), ("archive", "completed", "archived"), ("archive", "draft", "archived"),
])
def test_given_a_legal_action_when_applied_then_the_next_state(action, current, target):
    assert states.apply(action, current) == target


@pytest.mark.parametrize(("action", "current"), [
    ("resume", "running"), ("start", "completed"), ("pause", "archived"), ("finish", "paused"), ("explode", "draft"),
])
def test_given_an_illegal_action_when_applied_then_refused_naming_the_allowed_states(action, current):
    with pytest.raises(states.IllegalTransition) as raised:
        states.apply(action, current)
    assert raised.value.current == current


@pytest.mark.parametrize(("raw", "digits", "zones"), [
    ("+12125550101", "12125550101", ("America/New_York",)),
    ("14155550102", "14155550102", ("America/Los_Angeles",)),
    ("+442071234567", "442071234567", ("Europe/London",)),
    ("+4930123456", "4930123456", ("Europe/Berlin",)),
])
def test_given_an_e164_number_when_parsed_then_digits_and_the_zone_of_its_prefix(raw, digits, zones):
    assert numbers.parse(raw) == numbers.ContactNumber(digits, zones)


def test_given_a_prefix_spanning_zones_when_parsed_then_every_zone_is_kept():
    zones = numbers.parse("+18005550103").time_zones
    assert {"America/New_York", "America/Los_Angeles", "Pacific/Honolulu"} <= set(zones)
    assert len(zones) == 42


def test_given_a_number_outside_the_prefix_table_when_parsed_then_every_zone_of_its_country():
    assert numbers.parse("+15550000001").time_zones == numbers.parse("+18005550103").time_zones
    assert numbers.parse("+882123456789").time_zones == ()


@pytest.mark.parametrize("raw", ["", "call me", "+0123456789", "+1212555", "+99912345678", "١٢١٢٥٥٥٠١٠١٠", "+1212555010199999"])
def test_given_a_number_that_is_not_e164_when_parsed_then_refused(raw):
    with pytest.raises(numbers.InvalidContactNumber):
        numbers.parse(raw)


def test_given_an_explicit_zone_when_resolved_then_it_wins_and_an_unknown_one_is_refused():
    number = numbers.parse("+12125550101")
    assert numbers.contact_zones(number, "Asia/Tokyo") == ("Asia/Tokyo",)
    assert numbers.contact_zones(number, None) == ("America/New_York",)
    for bad in ("Mars/Olympus", "../etc/passwd", "x" * 65):
        with pytest.raises(ValueError):
            numbers.contact_zones(number, bad)
    with pytest.raises(ValueError, match="give time_zone"):
        numbers.contact_zones(numbers.parse("+882123456789"), None)


# 2026-11-25 is a Wednesday; New York is UTC-5 then, Paris UTC+1
@pytest.mark.parametrize(("utc", "zone", "open_"), [
    (datetime(2026, 11, 25, 12, 59, tzinfo=UTC), "America/New_York", False),  # 07:59 local
    (datetime(2026, 11, 25, 13, 0, tzinfo=UTC), "America/New_York", True),    # 08:00 local
    (datetime(2026, 11, 26, 1, 59, tzinfo=UTC), "America/New_York", True),    # 20:59 local
    (datetime(2026, 11, 26, 2, 0, tzinfo=UTC), "America/New_York", False),    # 21:00 local
    (datetime(2026, 11, 25, 13, 0, tzinfo=UTC), "Europe/Paris", True),        # 14:00 local
    (datetime(2026, 11, 25, 20, 0, tzinfo=UTC), "Europe/Paris", False),       # 21:00 local
])
def test_given_the_default_window_when_checked_then_open_from_8_to_21_contact_local_time(utc, zone, open_):
    assert DEFAULT.allows(utc, (zone,)) is open_


def test_given_weekdays_only_when_it_is_saturday_locally_but_friday_in_utc_then_closed():
    window = CallingWindow(time(8), time(21), WEEKDAYS)
    friday_evening_utc = datetime(2026, 11, 27, 23, 30, tzinfo=UTC)  # Saturday 10:30 in Tokyo
    assert window.allows(friday_evening_utc, ("Asia/Tokyo",)) is False
    assert window.allows(friday_evening_utc - timedelta(hours=12), ("Asia/Tokyo",)) is True


def test_given_several_zones_when_checked_then_open_only_where_it_is_open_in_all():
    noon_new_york = datetime(2026, 11, 25, 17, 0, tzinfo=UTC)
    assert DEFAULT.allows(noon_new_york, ("America/New_York", "America/Chicago")) is True
    assert DEFAULT.allows(noon_new_york, ("America/New_York", "Pacific/Honolulu")) is False  # 07:00 there
    assert DEFAULT.allows(noon_new_york, ()) is False


def test_given_a_closed_window_when_asking_for_the_next_opening_then_the_first_quarter_hour_it_opens():
    late = datetime(2026, 11, 26, 2, 7, tzinfo=UTC)  # 21:07 in New York
    assert DEFAULT.next_opening(late, ("America/New_York",)) == datetime(2026, 11, 26, 13, 0, tzinfo=UTC)
    noon = datetime(2026, 11, 25, 17, 3, tzinfo=UTC)
    assert DEFAULT.next_opening(noon, ("America/New_York",)) == noon
    spanning = ("Pacific/Guam", "Pacific/Honolulu", "America/New_York")
    assert DEFAULT.next_opening(noon, spanning) == datetime(2026, 11, 25, 22, 0, tzinfo=UTC)  # 08:00 in Guam
    mornings = CallingWindow(time(8), time(10), frozenset(range(1, 8)))
    assert mornings.next_opening(noon, ("Asia/Tokyo", "America/New_York")) is None  # never 8-10 in both


NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("outcome", "attempts", "status", "delay"), [
    ("human", 1, "completed", None),
    ("busy", 1, "pending", 600), ("busy", 2, "pending", 600), ("busy", 3, "failed", None),
    ("no_answer", 1, "pending", 3600), ("machine", 1, "pending", 4 * 3600), ("machine", 2, "failed", None),
    ("failed", 1, "pending", 1800), ("abandoned", 2, "pending", 3600), ("abandoned", 3, "failed", None),
])
def test_given_the_default_policy_when_an_attempt_ends_then_retried_after_its_delay_or_given_up(
        outcome, attempts, status, delay):
    decision = retries.decide({}, outcome, attempts, NOW)
    assert decision.status == status
    assert decision.next_attempt_at == (None if delay is None else NOW + timedelta(seconds=delay))


def test_given_a_campaign_rule_when_an_attempt_ends_then_the_rule_overrides_the_default():
    policy = {"busy": {"delay_seconds": 30, "max_attempts": 5}}
    assert retries.decide(policy, "busy", 4, NOW).next_attempt_at == NOW + timedelta(seconds=30)
    assert retries.decide(policy, "busy", 5, NOW).status == "failed"
    assert retries.decide(policy, "no_answer", 3, NOW).status == "failed"


def test_given_a_csv_when_read_then_rows_carry_their_line_numbers_and_blank_lines_are_skipped():
    body = "\ufeffPhone_Number , name\r\n+12125550101,Ada\r\n\r\n+4930123456,\"Hans, Jr\"\r\n".encode()
    assert csv_rows.read(body, required="phone_number", max_rows=5) == [
        (2, {"phone_number": "+12125550101", "name": "Ada"}),
        (4, {"phone_number": "+4930123456", "name": "Hans, Jr"})]


@pytest.mark.parametrize(("body", "row"), [
    (b"", None), (b"phone_number\n", None), (b"\xff\xfe", None), (b"phone_number,phone_number\n1\n", 1),
    (b"phone_number\n\"unclosed\n", 2), (b"phone_number\n1\n2\n3\n", 4),
])
def test_given_an_unreadable_csv_when_read_then_rejected_with_the_row(body, row):
    with pytest.raises(csv_rows.CsvRejected) as raised:
        csv_rows.read(body, required="phone_number", max_rows=2)
    assert raised.value.row == row
