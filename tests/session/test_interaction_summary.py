"""The interaction summary and the agent's segment measured on a live queue call, end to end:
the production CallSession on the simulator, a configured queue with one registered agent, the
agent answers, the caller is held once, the agent's after-call work ends by the wrap-up timer,
the agent sets a disposition. Real PostgreSQL and Redis. Durations are checked for sanity
(ordering and bounds from the scenario), never for exact timing."""
from __future__ import annotations

import uuid

import gevent
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.contact.distribution import ContactCentre
from app.contact.interactions import set_disposition
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.db.engine import tenant_session
from app.models import Agent, AgentQueue, Queue, User
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.simulator import Call
from tests.simulator.channel import CORE_UUID

WRAP_UP_SECONDS = 1


def _queue_with_agent(owner_engine, redis_client, redis_prefix, account, subdomain: str, short_abandon_seconds: int = 5):
    queue = Queue(id=uuid.uuid4(), account_id=account.id, name="support", offer_timeout_seconds=5,
                  max_missed_offers=2, wrap_up_seconds=WRAP_UP_SECONDS, announce_position=False,
                  short_abandon_seconds=short_abandon_seconds)
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.add(queue)
        user = User(id=uuid.uuid4(), account_id=account.id, username="agent-a", password_hash="x", role="agent")
        db.add(user)
        db.flush()
        agent = Agent(id=uuid.uuid4(), account_id=account.id, user_id=user.id, state="available",
                      sip_username=f"ag{uuid.uuid4().hex[:10]}", sip_password_encrypted=encrypt_secret("pw"))
        db.add(agent)
        db.flush()
        db.add(AgentQueue(account_id=account.id, agent_id=agent.id, queue_id=queue.id))
    presence = Presence(redis_client, redis_prefix)
    presence.registered(subdomain, agent.sip_username, 60, node=CORE_UUID)
    presence.agent_idle(str(account.id), str(agent.id))
    return queue, agent, presence


def _row(owner_conn, sql: str, **params):
    return owner_conn.execute(text(sql), params).mappings().first()


def test_given_a_queue_call_answered_by_an_agent_with_a_hold_then_every_indicator_and_the_segment_are_measured(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client, redis_prefix):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 1},
                                                   {"verb": "queue", "name": "support"}])
    subdomain = owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"),
                                   {"a": account.id}).scalar_one()
    queue, agent, presence = _queue_with_agent(owner_engine, redis_client, redis_prefix, account, subdomain)
    services.contact = ContactCentre(presence)
    # pause 1 s (IVR), queue: the agent answers at once and talks 2 s; held 0.5 s mid-talk
    call = simulate_call(Call(callee=number).bridge_answers(talk=2.0).hold(at=1.6, duration=0.5), controller)
    assert call.wait(15), "simulated call did not finish"
    record = call_record(owner_conn, call.uuid)
    assert record is not None
    assert (record["agent_id"], record["queue_id"]) == (agent.id, queue.id)
    assert record["journey"].endswith("queue")

    summary = _row(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert 900 <= summary["ivr_ms"] <= 3000  # the pause, answer to queue join
    assert 0 <= summary["queue_wait_ms"] < 2000  # an idle agent: offered at once
    assert summary["connect_latency_ms"] is not None and 0 <= summary["connect_latency_ms"] <= summary["queue_wait_ms"]
    assert (summary["hold_count"], summary["abandoned"], summary["short_abandon"]) == (1, False, False)
    assert 400 <= summary["hold_ms"] <= 1500
    assert 1000 <= summary["talk_ms"] + summary["hold_ms"] <= 4000  # the 2 s bridge
    assert summary["transfer_count"] == 0

    segment = _row(owner_conn, "SELECT * FROM interaction_segment WHERE trace_id = :t", t=record["trace_id"])
    assert (segment["agent_id"], segment["call_id"]) == (agent.id, uuid.UUID(call.uuid))
    assert segment["ended_at"] is not None and segment["started_at"] < segment["ended_at"]
    assert (segment["talk_ms"], segment["hold_ms"]) == (summary["talk_ms"], summary["hold_ms"])

    # the wrap-up timer ends the after-call work: segment and summary get it, AHT = talk+hold+acw
    acw = eventually(lambda: _row(owner_conn, "SELECT acw_ms FROM interaction_summary WHERE trace_id = :t",
                                  t=record["trace_id"])["acw_ms"], timeout=8, interval=0.1,
                     what="the after-call work recorded")
    assert WRAP_UP_SECONDS * 1000 - 100 <= acw <= WRAP_UP_SECONDS * 1000 + 3000
    summary = _row(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["aht_ms"] == summary["talk_ms"] + summary["hold_ms"] + summary["acw_ms"]
    segment = _row(owner_conn, "SELECT * FROM interaction_segment WHERE trace_id = :t", t=record["trace_id"])
    assert segment["acw_ms"] == acw and segment["handle_ms"] == summary["aht_ms"]

    with tenant_session(account.id) as db:  # the agent's disposition, by the call it was offered
        set_disposition(db, account.id, agent.id, "sale", call_id=uuid.UUID(call.uuid))
    assert _row(owner_conn, "SELECT disposition FROM interaction_summary WHERE trace_id = :t",
                t=record["trace_id"])["disposition"] == "sale"


@pytest.mark.parametrize("threshold, short", [(5, True), (1, False)])
def test_given_a_caller_who_hangs_up_in_the_queue_then_abandoned_and_short_under_the_queues_threshold(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client, redis_prefix,
        threshold, short):
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support"}])
    subdomain = owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"),
                                   {"a": account.id}).scalar_one()
    _, agent, presence = _queue_with_agent(owner_engine, redis_client, redis_prefix, account, subdomain,
                                           short_abandon_seconds=threshold)
    presence.agent_busy(str(account.id), str(agent.id))  # nobody to take the caller
    services.contact = ContactCentre(presence)
    call = simulate_call(Call(callee=number).hangup_after(2.0), controller)
    assert call.wait(15), "simulated call did not finish"
    record = call_record(owner_conn, call.uuid)
    assert record["queue_id"] is not None and record["agent_id"] is None
    summary = _row(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert (summary["abandoned"], summary["short_abandon"]) == (True, short)
    assert 1500 <= summary["queue_wait_ms"] <= 4000
    assert (summary["talk_ms"], summary["connect_latency_ms"], summary["aht_ms"]) == (0, None, 0)
    assert _row(owner_conn, "SELECT count(*) AS n FROM interaction_segment WHERE trace_id = :t",
                t=record["trace_id"])["n"] == 0


def test_given_the_agent_holds_its_own_leg_then_the_callers_summary_counts_the_hold(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client, redis_prefix):
    """uuid_hold on the agent's leg (the agent channel's hold): FreeSWITCH fires CHANNEL_HOLD /
    UNHOLD on that leg, which the controller's inbound connection relays to the caller's session
    (app/voice/agent_holds.py); the caller's leg has no hold_events of its own."""
    from app.voice.agent_holds import AgentHoldRelay
    from esl.protocol import Event

    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support"}])
    subdomain = owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"),
                                   {"a": account.id}).scalar_one()
    _, agent, presence = _queue_with_agent(owner_engine, redis_client, redis_prefix, account, subdomain)
    services.contact = ContactCentre(presence)
    relay = AgentHoldRelay(services.live_calls)
    call = simulate_call(Call(callee=number).bridge_answers(talk=2.0), controller)

    def agent_leg(name: str) -> Event:
        return Event([("Event-Name", name), ("Unique-ID", str(uuid.uuid4())), ("Other-Leg-Unique-ID", call.uuid),
                      ("variable_sbc_agent_id", str(agent.id))])

    eventually(lambda: call.uuid in services.live_calls, timeout=5, what="the call live")
    gevent.sleep(0.7)  # scenario: talk before the hold
    assert relay.relay(agent_leg("CHANNEL_HOLD"))
    gevent.sleep(0.6)  # scenario: the hold lasts ~0.6 s (the hold_ms asserted below)
    assert relay.relay(agent_leg("CHANNEL_UNHOLD"))
    assert call.wait(15), "simulated call did not finish"
    record = call_record(owner_conn, call.uuid)
    summary = _row(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["hold_count"] == 1 and 500 <= summary["hold_ms"] <= 1500, dict(summary)
    keys = [r[0] for r in owner_conn.execute(text(
        "SELECT routing_key FROM event_outbox WHERE body->>'trace_id' = :t ORDER BY created_at"),
        {"t": str(record["trace_id"])})]
    assert "call.hold" in keys and "call.resumed" in keys
