"""Outbound calls the controller dials (``call.originate``): least-cost routing into one
``bgapi originate``, the answered leg back on the outbound socket as a normal session, and a
call record for every attempt — against the simulator's inbound and outbound sockets."""
from __future__ import annotations

import json
import re
import uuid

import pytest
from sqlalchemy import text

from app.calls.originate import OriginateRequest
from app.db.engine import tenant_session
from app.events.envelope import Envelope
from app.events.payloads import call_originate
from app.models import Agent, Callback, Queue, SipTargetHost, User
from app.routing.lcr import gateway_name
from app.voice.originator import Originator
from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, executed, outbox_keys
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan


def _route(originator: Originator, account_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    ids = two_carrier_plan(account_id)
    originator.services.routing.reload()
    return ids


def _routed_app(originator: Originator, number_with_app, **fields):
    """(account, a number it owns, an app_json application) with the two-carrier plan live."""
    account, number, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}], **fields)
    _route(originator, account.id)
    return account, number, app_id


def _request(account, **fields) -> OriginateRequest:
    payload = call_originate(call_id=uuid.uuid4(), **{"phone_number": GERMAN_NUMBER, **fields})
    return OriginateRequest.from_envelope(Envelope("call.originate", payload, account=str(account.id),
                                                   trace_id=str(uuid.uuid4())))


def test_given_application_request_when_originated_then_lcr_legs_are_dialled_and_the_app_drives_the_answered_leg(
        dialling, inbound_sim, hook_server, number_with_app, owner_conn):
    originator, server = dialling
    hook_server.reply(Reply.json([{"verb": "say", "text": "Your appointment is tomorrow"}]))
    account, caller_id, app_id = number_with_app(call_hook_url=hook_server.url("/hook"))
    cheap, cheap_gw, backup_gw = _route(originator, account.id)
    request = _request(account, caller_id=caller_id, application_id=app_id, timeout_seconds=25)

    assert originator.originate(request) is True

    assert len(inbound_sim.originates) == 1  # the cheapest carrier answered: one leg dialled
    command = inbound_sim.originates[0]
    assert command.startswith("{")
    assert f"origination_uuid={request.call_id}" in command
    assert f"origination_caller_id_number={caller_id}" in command and "originate_timeout=25" in command
    legs = re.findall(r"sofia/gateway/(\w+)/(\d+)", command)
    assert legs == [(gateway_name(cheap_gw), GERMAN_NUMBER)]
    host, port = server.address
    assert command.endswith(f"'&socket({host}:{port} async full)'")  # one originate argument

    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    body = json.loads(hook_server.requests[0].body)
    assert (body["callId"], body["direction"], body["callStatus"]) == (str(request.call_id), "outbound", "in-progress")
    assert (body["from"], body["to"], body["traceId"]) == (caller_id, GERMAN_NUMBER, str(request.trace_id))
    assert [app for app, _ in executed(leg)] == ["speak"]  # already answered: no answer command
    record = call_record(owner_conn, str(request.call_id))
    assert (record["direction"], record["status"], record["carrier_id"]) == ("outbound", "completed", cheap)
    assert record["trace_id"] == request.trace_id
    assert {"call.started", "call.answered", "call.ended"} <= set(outbox_keys(owner_conn, request.trace_id))


def test_given_first_carrier_fails_when_originated_then_next_carrier_answers_under_the_same_call_id(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    cheap, cheap_gw, backup_gw = _route(originator, account.id)
    inbound_sim.fail_legs[gateway_name(cheap_gw)] = "NORMAL_TEMPORARY_FAILURE"  # SIP 503

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is True

    dialled = [re.findall(r"sofia/gateway/(\w+)/", c) for c in inbound_sim.originates]
    assert dialled == [[gateway_name(cheap_gw)], [gateway_name(backup_gw)]]
    assert all(f"origination_uuid={request.call_id}" in c for c in inbound_sim.originates)
    leg = inbound_sim.originated_calls[0]
    assert leg.uuid == str(request.call_id) and leg.wait(10)
    record = call_record(owner_conn, str(request.call_id))
    assert record["status"] == "completed"
    assert record["gateway_id"] == backup_gw and record["carrier_id"] != cheap


def test_given_callee_refuses_on_first_carrier_when_originated_then_no_other_carrier_is_rung(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    _, cheap_gw, _ = _route(originator, account.id)
    inbound_sim.fail_legs[gateway_name(cheap_gw)] = "USER_BUSY"

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    assert len(inbound_sim.originates) == 1
    assert call_record(owner_conn, str(request.call_id))["status"] == "busy"


def test_given_every_carrier_fails_when_originated_then_the_last_cause_is_recorded(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    _, cheap_gw, backup_gw = _route(originator, account.id)
    inbound_sim.fail_legs[gateway_name(cheap_gw)] = "NORMAL_TEMPORARY_FAILURE"
    inbound_sim.fail_legs[gateway_name(backup_gw)] = "RECOVERY_ON_TIMER_EXPIRE"

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    assert len(inbound_sim.originates) == 2
    assert call_record(owner_conn, str(request.call_id))["hangup_cause"] == "RECOVERY_ON_TIMER_EXPIRE"


def test_given_switch_answers_no_answer_when_originated_then_attempt_is_recorded_and_slot_released(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = _routed_app(originator, number_with_app, max_concurrent_calls=1)
    inbound_sim.originate_fails = "NO_ANSWER"

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    record = call_record(owner_conn, str(request.call_id))
    assert (record["direction"], record["status"], record["hangup_cause"]) == ("outbound", "no-answer", "NO_ANSWER")
    assert "call.failed" in outbox_keys(owner_conn, request.trace_id)
    assert originator.pending == set()
    # the account's only slot is free again: the next attempt is dialled, not refused
    inbound_sim.originate_fails = None
    assert originator.originate(_request(account, caller_id=caller_id, application_id=app_id)) is True


def test_given_no_lcr_route_when_originated_then_nothing_is_dialled_and_the_record_says_no_route(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}])

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    assert inbound_sim.originates == []
    record = call_record(owner_conn, str(request.call_id))
    assert (record["status"], record["hangup_cause"]) == ("failed", "NO_ROUTE_DESTINATION")


def test_given_caller_id_the_account_does_not_own_when_originated_then_it_is_refused_before_dialling(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, _, app_id = _routed_app(originator, number_with_app)

    request = _request(account, caller_id="15550009999", application_id=app_id)
    assert originator.originate(request) is False

    assert inbound_sim.originates == []
    assert call_record(owner_conn, str(request.call_id))["hangup_cause"] == "CALL_REJECTED"


def _callback(account_id: uuid.UUID, contact: str) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    with tenant_session(account_id) as session:
        user = User(account_id=account_id, username=f"agent{uuid.uuid4().hex[:6]}", password_hash="x",
                    role="agent")
        queue = Queue(account_id=account_id, name=f"q{uuid.uuid4().hex[:6]}")
        session.add_all([user, queue])
        session.flush()
        agent = Agent(account_id=account_id, user_id=user.id, contact=contact, state="available")
        session.add(agent)
        session.flush()
        callback = Callback(account_id=account_id, queue_id=queue.id, phone_number=GERMAN_NUMBER,
                            status="dialing")
        session.add(callback)
        session.flush()
        return agent.id, queue.id, callback.id


def _callback_row(owner_conn, callback_id: uuid.UUID) -> tuple[str, int]:
    row = owner_conn.execute(text("SELECT status, attempts FROM callbacks WHERE id = :i"),
                             {"i": callback_id}).first()
    return row.status, row.attempts


@pytest.mark.parametrize("contact, endpoint", [
    ("sip:agent7@pbx.example.com", "sofia/external/agent7@pbx.example.com"),
    ("sofia/internal/agent7@pbx.example.com", "sofia/internal/agent7@pbx.example.com")])  # the agents' profile
def test_given_callback_when_customer_answers_then_agent_is_bridged_and_callback_completed(
        dialling, inbound_sim, make_account, owner_conn, media_dns, contact, endpoint):
    originator, _ = dialling
    account = make_account()
    _route(originator, account.id)
    # an agent reached by a sip: URI (or the sofia/internal/ form of one: app/contact/endpoints.py)
    # is a sip: dial target: its host must be on the account's list
    with tenant_session(account.id) as session:
        session.add(SipTargetHost(account_id=account.id, host="pbx.example.com"))
    agent_id, queue_id, callback_id = _callback(account.id, contact)
    inbound_sim.on_originate = lambda scenario: scenario.bridge_answers(talk=0.05)

    request = _request(account, agent_id=agent_id, queue_id=queue_id, callback_id=callback_id)
    assert originator.originate(request) is True

    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    bridges = [arg for app, arg in executed(leg) if app == "bridge"]
    assert len(bridges) == 1 and bridges[0].endswith(endpoint)
    assert _callback_row(owner_conn, callback_id) == ("completed", 1)
    record = call_record(owner_conn, str(request.call_id))
    assert (record["agent_id"], record["queue_id"], record["direction"]) == (agent_id, queue_id, "outbound")


@pytest.mark.parametrize("attempt, status", [(1, "pending"), (3, "failed")])
def test_given_callback_attempt_when_customer_is_busy_then_callback_is_retried_until_the_last_attempt(
        dialling, inbound_sim, make_account, owner_conn, attempt, status):
    originator, _ = dialling
    account = make_account()
    _route(originator, account.id)
    agent_id, queue_id, callback_id = _callback(account.id, "sip:agent7@192.0.2.50")
    inbound_sim.originate_fails = "USER_BUSY"

    request = _request(account, agent_id=agent_id, queue_id=queue_id, callback_id=callback_id,
                       attempt=attempt)
    assert originator.originate(request) is False

    assert _callback_row(owner_conn, callback_id) == (status, attempt)
    assert call_record(owner_conn, str(request.call_id))["status"] == "busy"


def test_given_account_at_its_limit_when_originated_then_refused_without_dialling(
        dialling, inbound_sim, number_with_app, owner_conn):
    originator, _ = dialling
    account, caller_id, app_id = _routed_app(originator, number_with_app, max_concurrent_calls=1)
    originator.services.limiter.acquire("busy-call", account.id, 1, None, 0)

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    assert inbound_sim.originates == []
    assert call_record(owner_conn, str(request.call_id))["status"] == "refused"


def test_given_a_dial_string_freeswitch_would_split_when_originated_then_the_attempt_is_refused_not_crashed(
        dialling, inbound_sim, number_with_app, owner_conn, monkeypatch):
    originator, _ = dialling
    account, caller_id, app_id = _routed_app(originator, number_with_app)
    real = originator.services.lcr_bridge
    monkeypatch.setattr(originator.services, "lcr_bridge",
                        lambda account_id, number, carrier_id=None: real(account_id, number, carrier_id)
                        .replace("sofia/", "sofia /", 1))

    request = _request(account, caller_id=caller_id, application_id=app_id)
    assert originator.originate(request) is False

    assert inbound_sim.originates == []
    record = call_record(owner_conn, str(request.call_id))
    assert (record["status"], record["hangup_cause"]) == ("failed", "INVALID_NUMBER_FORMAT")


def test_given_callback_for_an_agent_with_sip_credentials_then_the_customer_leg_dials_its_user_in_the_account_domain(
        dialling, inbound_sim, make_account, owner_conn):
    """The agent's registered endpoint (the same user the queue's offers ring), resolved in
    the account's directory domain: the originate sets ``domain_name`` to the subdomain."""
    from app.crypto import encrypt_secret

    originator, _ = dialling
    account = make_account()
    _route(originator, account.id)
    agent_id, queue_id, callback_id = _callback(account.id, None)
    with tenant_session(account.id) as session:
        agent = session.get(Agent, agent_id)
        agent.sip_username, agent.sip_password_encrypted = "ag0123456789ab", encrypt_secret("pw")
    inbound_sim.on_originate = lambda scenario: scenario.bridge_answers(talk=0.05)
    from app.contact.distribution import ContactCentre  # the controller's: the real directory lookup
    from app.contact.presence import Presence
    from app.settings import get_settings
    originator.services.contact = ContactCentre(Presence(originator.services.redis,
                                                         get_settings().redis_key_prefix))

    request = _request(account, agent_id=agent_id, queue_id=queue_id, callback_id=callback_id)
    assert originator.originate(request) is True

    assert f"domain_name={account.subdomain}" in inbound_sim.originates[0]
    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    bridges = [arg for app, arg in executed(leg) if app == "bridge"]
    assert len(bridges) == 1 and bridges[0].endswith(f"user/ag0123456789ab@{account.subdomain}")
    assert _callback_row(owner_conn, callback_id) == ("completed", 1)


def test_given_application_request_then_no_domain_name_is_set_on_the_leg(dialling, inbound_sim, number_with_app):
    originator, _ = dialling
    account, caller_id, app_id = _routed_app(originator, number_with_app)
    assert originator.originate(_request(account, caller_id=caller_id, application_id=app_id)) is True
    assert "domain_name=" not in inbound_sim.originates[0]
