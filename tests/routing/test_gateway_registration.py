"""Registration state of registering gateways from sofia::gateway_state, kept in the run's
Redis key space and published once per change (issue 25)."""
from __future__ import annotations

import uuid

import pytest

from app.routing.gateway_health import GATEWAY_DELETE, GATEWAY_STATE
from app.routing.gateway_registration import GatewayRegistrations, counts_by_state, read_state, read_states
from app.routing.lcr import gateway_name
from esl.protocol import Event


class Published:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, routing_key, payload, **_):
        self.calls.append((routing_key, payload))


def _state_event(name: str, state: str, **extra: str) -> Event:
    """sofia_reg.c sofia_reg_fire_custom_gateway_state_event's headers."""
    headers = [("Event-Name", "CUSTOM"), ("Event-Subclass", GATEWAY_STATE), ("Gateway", name), ("State", state)]
    return Event(headers + list(extra.items()), "")


@pytest.fixture()
def tracker(redis_client, redis_prefix):
    published = Published()
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    carrier = uuid.uuid4()
    regs = GatewayRegistrations(redis_client, prefix, published, describe=lambda gid: (carrier, "127.0.0.1:5061"))
    return regs, published, prefix, carrier


def test_given_trying_then_reged_then_a_refresh_when_handled_then_two_changes_published(tracker, redis_client):
    regs, published, prefix, carrier = tracker
    gw = uuid.uuid4()
    name = gateway_name(gw)
    assert regs.on_event(_state_event(name, "TRYING")) is True
    assert regs.on_event(_state_event(name, "REGED", Status="200", Phrase="OK")) is True
    assert regs.on_event(_state_event(name, "REGED", Status="200", Phrase="OK")) is False  # a refresh
    assert [(k, p["state"], p["previous"]) for k, p in published.calls] == [
        ("system.gateway.registration", "TRYING", None), ("system.gateway.registration", "REGED", "TRYING")]
    assert published.calls[1][1]["carrierId"] == str(carrier)
    assert read_state(redis_client, prefix, gw)["state"] == "REGED"
    assert counts_by_state(redis_client, prefix)["REGED"] == 1


def test_given_a_wrong_password_when_sofia_gives_up_then_fail_wait_with_the_reply_is_kept(tracker, redis_client):
    regs, published, prefix, _ = tracker
    gw = uuid.uuid4()
    regs.on_event(_state_event(gateway_name(gw), "FAIL_WAIT", Status="403", Phrase="Forbidden"))
    stored = read_state(redis_client, prefix, gw)
    assert (stored["state"], stored["sipStatus"], stored["phrase"]) == ("FAIL_WAIT", "403", "Forbidden")
    assert published.calls[-1][1]["state"] == "FAIL_WAIT"


def test_given_ping_changes_of_a_gateway_that_does_not_register_then_nothing_is_kept(tracker, redis_client):
    regs, published, prefix, _ = tracker
    event = _state_event(gateway_name(uuid.uuid4()), "NOREG", **{"Ping-Status": "DOWN"})
    assert regs.on_event(event) is None
    assert regs.on_event(_state_event("external-carrier", "REGED")) is None  # not one of ours
    assert published.calls == [] and read_states(redis_client, prefix) == {}


def test_given_a_deleted_gateway_then_its_registration_is_forgotten(tracker, redis_client):
    regs, _, prefix, _ = tracker
    gw = uuid.uuid4()
    regs.on_event(_state_event(gateway_name(gw), "REGED"))
    regs.on_event(Event([("Event-Subclass", GATEWAY_DELETE), ("Gateway", gateway_name(gw))], ""))
    assert read_state(redis_client, prefix, gw) is None
