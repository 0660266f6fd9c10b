"""The callback dispatcher (app/contact/callbacks.py): which callback an available agent gets,
the atomic claim of the agent, dialing → completed / pending after the retry delay / failed
after the third attempt, lost outcomes, the sweep, and two dispatchers racing over many
callbacks. Real PostgreSQL (tenant role, RLS, outbox) and Redis; the originate side's outcome
is applied with the controller's own function (app/calls/originate.record_callback_attempt)."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import gevent
import pytest
import redis as redis_lib
from sqlalchemy import text
from sqlalchemy.orm import Session

from app import limits
from app.calls.originate import OriginateRequest, record_callback_attempt
from app.contact import callbacks
from app.contact.callbacks import CallbackDispatcher, call_ended, dispatch_for_agent
from app.contact.presence import ENGAGED_TTL_SECONDS, Presence
from app.events.envelope import Envelope
from app.models import Agent, Callback, Queue
from app.settings import get_settings
from tests.plugins.agent_rows import add_agent

NUMBER = "4930123456"


@dataclass
class Centre:
    account_id: uuid.UUID
    subdomain: str
    queues: dict[str, uuid.UUID]
    agents: list[Agent]
    presence: Presence
    engine: object
    ended: list = field(default_factory=list)

    def add_callback(self, queue: str, *, priority: int = 0, age_seconds: float = 0.0,
                     number: str = NUMBER) -> uuid.UUID:
        row = Callback(id=uuid.uuid4(), account_id=self.account_id, queue_id=self.queues[queue],
                       phone_number=number, priority=priority,
                       requested_at=datetime.now(timezone.utc) - timedelta(seconds=age_seconds))
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            db.add(row)
        return row.id

    def row(self, callback_id: uuid.UUID) -> tuple[str, int]:
        with self.engine.connect() as conn:
            return tuple(conn.execute(text("SELECT status, attempts FROM callbacks WHERE id = :i"),
                                      {"i": callback_id}).one())

    def last_attempt_at(self, callback_id: uuid.UUID) -> datetime:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT last_attempt_at FROM callbacks WHERE id = :i"),
                                {"i": callback_id}).scalar_one()

    def agent_state(self, agent: Agent) -> str:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT state FROM agents WHERE id = :i"), {"i": agent.id}).scalar_one()

    def idle(self) -> list[str]:
        return self.presence.idle_agents(str(self.account_id))

    def originates(self) -> list[dict]:
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT body FROM event_outbox WHERE routing_key = 'call.originate' "
                "AND body->>'account' = :a ORDER BY created_at"), {"a": str(self.account_id)}).scalars()
            return [body["payload"] for body in rows]


def make_centre(seed, owner_engine, redis_client, *, agents: int = 2, wrap_up_seconds: int = 1) -> Centre:
    """Queues ``support`` and ``sales``; agent 0 is in support only, agent 1 in sales only (any
    further agents in support); all available, registered and idle (agent 0 longest)."""
    tenant = seed.tenant()
    account = tenant.account_id
    queues = {name: uuid.uuid4() for name in ("support", "sales")}
    rows = []
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        for name, queue_id in queues.items():
            db.add(Queue(id=queue_id, account_id=account, name=name, wrap_up_seconds=wrap_up_seconds))
        db.flush()
        for n in range(agents):
            rows.append(add_agent(db, account, [queues["sales" if n == 1 else "support"]], f"cbagent{n}"))
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    now_ms = int(time.time() * 1000)
    for n, agent in enumerate(rows):
        presence.registered(tenant.subdomain, agent.sip_username, 600)
        presence.agent_idle(str(account), str(agent.id), since_ms=now_ms - 10_000 + n)
    return Centre(account, tenant.subdomain, queues, rows, presence, owner_engine)


@pytest.fixture
def centre(seed, owner_engine, redis_client) -> Centre:
    return make_centre(seed, owner_engine, redis_client)


def _outcome(centre: Centre, payload: dict, *, reached: bool, later=None) -> None:
    """What the controller does with the call.originate: the callback's status from the
    attempt's outcome, then call.ended (agentId set) frees the agent."""
    request = OriginateRequest.from_envelope(Envelope("call.originate", payload, account=str(centre.account_id)))
    record_callback_attempt(request, reached=reached)
    call_ended(centre.account_id, str(request.call_id), answered=reached, queue_id=request.queue_id,
               presence=centre.presence, later=later or (lambda *args: centre.ended.append(args)))


def test_given_callbacks_of_several_priorities_and_ages_when_an_agent_is_available_then_the_highest_priority_oldest_of_its_queue_is_dialled(
        centre):
    low_old = centre.add_callback("support", priority=0, age_seconds=600)
    high_new = centre.add_callback("support", priority=5, age_seconds=10)
    high_old = centre.add_callback("support", priority=5, age_seconds=60)
    other_queue = centre.add_callback("sales", priority=9, age_seconds=900)
    agent = centre.agents[0]

    done = dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence)

    assert done is not None and done.callback_id == high_old and done.attempt == 1
    assert centre.row(high_old) == ("dialing", 1)
    assert [centre.row(c) for c in (low_old, high_new, other_queue)] == [("pending", 0)] * 3
    (payload,) = centre.originates()
    assert payload["callbackId"] == str(high_old) and payload["agentId"] == str(agent.id)
    assert payload["queueId"] == str(centre.queues["support"]) and payload["attempt"] == 1
    assert payload["phoneNumber"] == NUMBER and payload["callId"] == str(done.call_id)
    assert payload["timeoutSeconds"] == limits.CALLBACK_RING_TIMEOUT_SECONDS
    # the agent is claimed: out of the idle set, engaged by the callback's call
    assert str(agent.id) not in centre.idle()
    assert centre.presence.engaged_by(str(centre.account_id), str(agent.id)) == str(done.call_id)
    # nobody refreshes a callback call's mark: it is set for the callback's own (longer) bound
    mark = centre.presence.engaged_prefix(str(centre.account_id)) + str(agent.id)
    assert ENGAGED_TTL_SECONDS < centre.presence.redis.ttl(mark) <= limits.CALLBACK_ENGAGED_TTL_SECONDS


def test_given_callbacks_only_in_other_queues_when_an_agent_is_available_then_nothing_is_dialled(centre):
    sales = centre.add_callback("sales", priority=9)

    assert dispatch_for_agent(centre.account_id, centre.agents[0].id, presence=centre.presence) is None

    assert centre.row(sales) == ("pending", 0) and centre.originates() == []
    assert str(centre.agents[0].id) in centre.idle()


@pytest.mark.parametrize("why", ["not_ready", "unregistered", "engaged_by_a_queue_caller",
                                 "a_live_caller_waits_in_the_queue"])
def test_given_an_agent_that_cannot_take_a_call_then_the_callback_stays_pending(centre, why):
    agent = centre.agents[0]
    callback = centre.add_callback("support")
    if why == "not_ready":
        with centre.engine.begin() as conn:
            conn.execute(text("UPDATE agents SET state = 'not_ready' WHERE id = :i"), {"i": agent.id})
    elif why == "unregistered":
        centre.presence.unregistered(centre.subdomain, agent.sip_username)
    elif why == "a_live_caller_waits_in_the_queue":  # live callers first: the queue verb claims it
        centre.presence.join(str(centre.account_id), "support", "caller-2")
    else:  # the queue verb's claim took it first
        centre.presence.redis.set(centre.presence.engaged_prefix(str(centre.account_id)) + str(agent.id), "caller-1")

    assert dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence) is None

    assert centre.row(callback) == ("pending", 0) and centre.originates() == []


def test_given_a_customer_who_answers_then_the_callback_is_completed_and_the_agent_goes_wrap_up_then_available(centre):
    agent = centre.agents[0]
    callback = centre.add_callback("support")
    dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence)

    _outcome(centre, centre.originates()[0], reached=True)

    assert centre.row(callback) == ("completed", 1)
    assert centre.agent_state(agent) == "wrap_up"
    assert centre.presence.engaged_by(str(centre.account_id), str(agent.id)) is None
    ((seconds, over, *args),) = centre.ended  # the queue's after-call work, then available
    assert seconds == 1
    over(*args)
    assert centre.agent_state(agent) == "available" and str(agent.id) in centre.idle()


def test_given_a_customer_never_reached_then_retried_after_the_delay_and_failed_after_the_third_attempt(centre):
    agent = centre.agents[0]
    callback = centre.add_callback("support")
    delay = timedelta(seconds=limits.CALLBACK_RETRY_DELAY_SECONDS)
    at = datetime.now(timezone.utc)
    for attempt in range(1, limits.CALLBACK_MAX_ATTEMPTS + 1):
        done = dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence, now=at)
        assert done is not None and done.attempt == attempt
        assert centre.row(callback) == ("dialing", attempt)
        _outcome(centre, centre.originates()[-1], reached=False)
        # not reached: the agent is idle again at once (no wrap-up)
        assert str(agent.id) in centre.idle() and centre.agent_state(agent) == "available"
        ended_at = centre.last_attempt_at(callback)  # the delay runs from the attempt's outcome
        if attempt < limits.CALLBACK_MAX_ATTEMPTS:
            assert centre.row(callback) == ("pending", attempt)
            assert dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence,
                                      now=ended_at + delay - timedelta(seconds=1)) is None
        at = ended_at + delay
    assert centre.row(callback) == ("failed", limits.CALLBACK_MAX_ATTEMPTS)
    assert dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence,
                              now=at + 10 * delay) is None
    assert [p["attempt"] for p in centre.originates()] == [1, 2, 3]


def test_given_an_attempt_whose_outcome_is_lost_then_the_sweep_makes_it_pending_again_and_failed_at_the_last(centre):
    first = centre.add_callback("support")
    last = centre.add_callback("support")
    with centre.engine.begin() as conn:
        conn.execute(text("UPDATE callbacks SET status = 'dialing', attempts = 1, last_attempt_at = now() - interval '1 hour' WHERE id = :i"), {"i": first})
        conn.execute(text("UPDATE callbacks SET status = 'dialing', attempts = 3, last_attempt_at = now() - interval '1 hour' WHERE id = :i"), {"i": last})
    fresh = centre.add_callback("sales")
    with centre.engine.begin() as conn:
        conn.execute(text("UPDATE callbacks SET status = 'dialing', attempts = 1, last_attempt_at = now() WHERE id = :i"), {"i": fresh})

    expired = callbacks.expire_stale_attempts()
    assert {(centre.account_id, first), (centre.account_id, last)} <= set(expired)

    assert centre.row(first) == ("pending", 1) and centre.row(last) == ("failed", 3)
    assert centre.row(fresh) == ("dialing", 1)


def test_given_an_attempt_lost_with_its_agent_claimed_then_the_sweep_frees_the_agent_and_dials_again(centre):
    """No controller ever took the call.originate: no call.ended will come for it."""
    agent = centre.agents[0]
    callback = centre.add_callback("support")
    first = dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence)
    with centre.engine.begin() as conn:
        conn.execute(text("UPDATE callbacks SET last_attempt_at = now() - interval '1 hour' WHERE id = :i"),
                     {"i": callback})

    CallbackDispatcher(centre.presence).sweep()

    assert centre.row(callback) == ("dialing", 2)
    second = centre.originates()[-1]
    assert second["agentId"] == str(agent.id) and second["callId"] != str(first.call_id)
    assert centre.presence.engaged_by(str(centre.account_id), str(agent.id)) == second["callId"]


def test_given_an_agent_already_available_when_a_callback_is_created_then_the_sweep_dials_it(centre):
    callback = centre.add_callback("sales")
    dispatcher = CallbackDispatcher(centre.presence)

    assert (centre.account_id, centre.agents[1].id) in callbacks.agents_with_work()
    assert (centre.account_id, centre.agents[0].id) not in callbacks.agents_with_work()
    dispatcher.sweep()

    assert centre.row(callback) == ("dialing", 1)
    assert centre.originates()[0]["agentId"] == str(centre.agents[1].id)


def test_given_a_callback_scheduled_later_then_it_waits_until_its_time_comes(centre):
    later = centre.add_callback("sales", priority=9, age_seconds=600)
    with Session(centre.engine) as db, db.begin():
        db.get(Callback, later).scheduled_at = datetime.now(timezone.utc) + timedelta(hours=1)
    agent = centre.agents[1]

    assert dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence) is None
    assert (centre.account_id, agent.id) not in callbacks.agents_with_work()
    assert centre.row(later) == ("pending", 0) and centre.originates() == []
    an_hour_on = datetime.now(timezone.utc) + timedelta(hours=1, seconds=1)
    assert (centre.account_id, agent.id) in callbacks.agents_with_work(now=an_hour_on)
    done = dispatch_for_agent(centre.account_id, agent.id, presence=centre.presence, now=an_hour_on)
    assert done is not None and done.callback_id == later and centre.row(later) == ("dialing", 1)


def test_given_agent_state_changed_to_available_on_the_bus_then_the_dispatcher_dials_for_that_agent(centre):
    callback = centre.add_callback("support")
    dispatcher = CallbackDispatcher(centre.presence)
    agent = centre.agents[0]

    dispatcher.handle(Envelope("agent.state.changed", {"agentId": str(agent.id), "state": "not_ready"},
                               account=str(centre.account_id)))
    assert centre.row(callback) == ("pending", 0)
    dispatcher.handle(Envelope("agent.state.changed", {"agentId": str(agent.id), "state": "available"},
                               account=str(centre.account_id)))
    assert centre.row(callback) == ("dialing", 1)

    # the attempt's call.ended (customer busy): the agent is freed and takes the next callback
    second = centre.add_callback("support")
    payload = centre.originates()[0]
    record_callback_attempt(OriginateRequest.from_envelope(
        Envelope("call.originate", payload, account=str(centre.account_id))), reached=False)
    dispatcher.handle(Envelope("call.ended", {"callId": payload["callId"], "agentId": str(agent.id),
                                              "queueId": payload["queueId"], "answeredAt": None},
                               account=str(centre.account_id)))
    assert centre.row(callback) == ("pending", 1) and centre.row(second) == ("dialing", 1)


def test_given_a_queue_call_ended_with_an_agent_then_the_dispatcher_leaves_that_agent_alone(centre):
    agent = centre.agents[0]
    centre.presence.redis.set(centre.presence.engaged_prefix(str(centre.account_id)) + str(agent.id), "caller-9")
    assert call_ended(centre.account_id, "caller-9", answered=True, queue_id=None,
                      presence=centre.presence) is None
    assert centre.presence.engaged_by(str(centre.account_id), str(agent.id)) == "caller-9"


def test_given_two_dispatchers_racing_over_many_callbacks_and_agents_then_none_is_dialled_twice_and_none_is_lost(
        seed, owner_engine, redis_client):
    """Two dispatchers — each its own Redis connection and its own PostgreSQL connections —
    run at once in greenlets (psycopg2 is cooperative: their transactions really interleave)
    over 300 callbacks and 12 agents of one queue. Each dispatched call ends as the switch
    would end it (reached or not), which frees the agent for either dispatcher again."""
    centre = make_centre(seed, owner_engine, redis_client, agents=12, wrap_up_seconds=0)
    with owner_engine.begin() as conn:  # every agent in support (agent 1 was in sales)
        conn.execute(text("INSERT INTO agent_queues (account_id, agent_id, queue_id) VALUES (:a, :g, :q)"),
                     {"a": centre.account_id, "g": centre.agents[1].id, "q": centre.queues["support"]})
    ids = [centre.add_callback("support", priority=n % 3, age_seconds=1000 - n) for n in range(300)]
    prefix = get_settings().redis_key_prefix
    dispatchers = [Presence(redis_lib.Redis.from_url(get_settings().redis_url), prefix) for _ in range(2)]
    on_call: dict[str, str] = {}   # agent → callback it is dialling now (never two at once)
    overlaps: list[str] = []
    won: list[tuple[int, uuid.UUID]] = []

    def run(index: int, presence: Presence) -> None:
        agents = centre.agents if index == 0 else list(reversed(centre.agents))
        idle_rounds = 0
        while idle_rounds < 3:
            progressed = False
            for agent in agents:
                done = dispatch_for_agent(centre.account_id, agent.id, presence=presence,
                                          retry_delay_seconds=0)
                if done is None:
                    continue
                progressed = True
                if str(agent.id) in on_call:
                    overlaps.append(str(agent.id))
                on_call[str(agent.id)] = str(done.callback_id)
                won.append((index, done.callback_id))
                gevent.sleep(0)  # the other dispatcher runs while this call "rings"
                payload = next(p for p in centre.originates() if p["callId"] == str(done.call_id))
                del on_call[str(agent.id)]
                _outcome(centre, payload, reached=len(won) % 4 != 0)  # every 4th: not reached
            idle_rounds = 0 if progressed else idle_rounds + 1
            gevent.sleep(0)

    gevent.joinall([gevent.spawn(run, n, p) for n, p in enumerate(dispatchers)], raise_error=True)

    originates = centre.originates()
    attempts = [(p["callbackId"], p["attempt"]) for p in originates]
    assert len(attempts) == len(set(attempts)), "a callback attempt was dialled twice"
    assert overlaps == [], "an agent was given two callbacks at once"
    statuses = {c: centre.row(c) for c in ids}
    assert all(status in ("completed", "failed") for status, _ in statuses.values()), "a callback was lost"
    for callback_id, (status, attempts_made) in statuses.items():
        dialled = sorted(a for c, a in attempts if c == str(callback_id))
        assert dialled == list(range(1, attempts_made + 1))
    assert {index for index, _ in won} == {0, 1}  # both dispatchers took part
    assert sorted(centre.idle()) == sorted(str(a.id) for a in centre.agents)
