"""Queue strategies of the atomic claim (app/contact/presence.py, one Lua script) on the real
Redis: longest_idle, round_robin, fewest_calls, ring_all, and tiers before any of them; and
atomicity of each under two racing claimers (two connections, as two controllers)."""
from __future__ import annotations

import uuid

import gevent
import pytest
import redis as redis_lib

from app import limits
from app.contact.presence import Candidate, Presence
from app.settings import get_settings

DOMAIN = "strategies"


@pytest.fixture
def presence(redis_client) -> Presence:
    return Presence(redis_client, get_settings().redis_key_prefix)


def _members(presence: Presence, account: str, count: int, tiers: list[int] | None = None,
             idle_order: list[int] | None = None) -> list[Candidate]:
    """``count`` registered idle agents ``a00``.. (ids sort by number); agent n idle since
    ``1000 + idle_order[n]`` (default n: a00 idle longest)."""
    members = [Candidate(f"a{n:02d}", DOMAIN, f"sip{uuid.uuid4().hex[:8]}", (tiers or [1] * count)[n])
               for n in range(count)]
    for n, member in enumerate(members):
        presence.registered(DOMAIN, member.sip_username, 60)
        presence.agent_idle(account, member.agent_id, since_ms=1000 + (idle_order or list(range(count)))[n])
    return members


def _serve(presence: Presence, account: str, members: list[Candidate], strategy: str, calls: int,
           back_idle_at: int = 10_000) -> list[str]:
    """``calls`` callers one after another; each claimed agent is idle again at once (its call
    over), at the back of the line."""
    chosen = []
    for n in range(calls):
        call = f"call-{uuid.uuid4().hex[:8]}"
        presence.join(account, "q", call)
        agent = presence.claim(account, "q", call, members, strategy=strategy)
        assert agent is not None
        chosen.append(agent)
        presence.release(account, agent)
        presence.agent_idle(account, agent, since_ms=back_idle_at + n)
    return chosen


def test_given_longest_idle_then_agents_are_offered_in_idle_since_order(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 3, idle_order=[2, 0, 1])
    assert _serve(presence, account, members, "longest_idle", 4) == ["a01", "a02", "a00", "a01"]


def test_given_round_robin_then_agents_are_offered_in_turn_whatever_their_idle_time(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 3, idle_order=[2, 0, 1])
    assert _serve(presence, account, members, "round_robin", 5) == ["a00", "a01", "a02", "a00", "a01"]


def test_given_round_robin_when_the_next_agent_is_busy_then_the_one_after_it_is_offered(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 3)
    assert _serve(presence, account, members, "round_robin", 1) == ["a00"]
    presence.agent_busy(account, "a01")
    assert _serve(presence, account, members, "round_robin", 2) == ["a02", "a00"]


def test_given_fewest_calls_then_the_agent_with_fewest_answered_today_is_offered_ties_by_longest_idle(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 3)
    for _ in range(2):
        presence.count_handled(account, "a00")
    presence.count_handled(account, "a01")
    assert presence.handled_today(account, "a00") == 2
    call = "call-1"
    presence.join(account, "q", call)
    assert presence.claim(account, "q", call, members, strategy="fewest_calls") == "a02"
    presence.count_handled(account, "a02")
    presence.count_handled(account, "a02")
    presence.release(account, "a02")
    presence.agent_idle(account, "a02", since_ms=50_000)
    presence.join(account, "q", "call-2")
    assert presence.claim(account, "q", "call-2", members, strategy="fewest_calls") == "a01"


def test_given_tiers_then_the_lower_tier_is_offered_first_and_the_strategy_applies_within_it(presence):
    account = str(uuid.uuid4())
    # a00 idle longest but tier 2; a01 and a02 tier 1
    members = _members(presence, account, 3, tiers=[2, 1, 1])
    chosen = _serve(presence, account, members, "longest_idle", 3)
    assert chosen == ["a01", "a02", "a01"]
    for agent in ("a01", "a02"):
        presence.agent_busy(account, agent)
    presence.join(account, "q", "call-x")
    assert presence.claim(account, "q", "call-x", members) == "a00"  # tier 1 all busy: tier 2


def test_given_ring_all_then_every_idle_registered_agent_of_the_best_tier_is_claimed_longest_idle_first(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 4, tiers=[1, 1, 1, 2], idle_order=[1, 0, 2, 3])
    presence.unregistered(DOMAIN, members[2].sip_username)
    presence.join(account, "q", "call-1")
    claimed = presence.claim_agents(account, "q", "call-1", members, strategy="ring_all")
    assert [(c.agent_id, c.idle_since_ms) for c in claimed] == [("a01", 1000), ("a00", 1001)]
    assert presence.idle_agents(account) == ["a02", "a03"]  # unregistered, other tier
    assert presence.engaged_by(account, "a00") == "call-1" and presence.engaged_by(account, "a01") == "call-1"
    assert presence.waiting(account, "q") == 0


def test_given_ring_all_with_more_idle_agents_than_the_leg_limit_then_only_the_limit_rings(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, limits.QUEUE_RING_ALL_MAX_LEGS + 3)
    presence.join(account, "q", "call-1")
    claimed = presence.claim_agents(account, "q", "call-1", members, strategy="ring_all")
    assert [c.agent_id for c in claimed] == [m.agent_id for m in members[:limits.QUEUE_RING_ALL_MAX_LEGS]]


def test_given_an_unknown_strategy_then_the_claim_refuses_it(presence):
    with pytest.raises(ValueError):
        presence.claim_agents(str(uuid.uuid4()), "q", "c", [Candidate("a", DOMAIN, "s")], strategy="random")


@pytest.mark.parametrize("strategy", ["longest_idle", "round_robin", "fewest_calls", "ring_all"])
def test_given_two_controllers_racing_under_each_strategy_then_no_agent_and_no_caller_is_assigned_twice(strategy):
    """30 callers, 12 agents (three tiers), every caller claimed from two connections at once;
    ring_all takes several agents per caller, each agent still once."""
    prefix = get_settings().redis_key_prefix
    account = str(uuid.uuid4())
    controllers = [Presence(redis_lib.Redis.from_url(get_settings().redis_url), prefix) for _ in range(2)]
    members = _members(controllers[0], account, 12, tiers=[1 + n % 3 for n in range(12)])
    callers = [f"call-{n}" for n in range(30)]
    for n, call in enumerate(callers):
        controllers[0].join(account, "q", call, enqueued_ms=5000 + n)
    won: list[tuple[str, str]] = []

    def contend(presence: Presence) -> None:
        for _ in range(50):
            for call in callers:
                for claimed in presence.claim_agents(account, "q", call, members, strategy=strategy):
                    won.append((call, claimed.agent_id))
            gevent.sleep(0)

    gevent.joinall([gevent.spawn(contend, p) for p in controllers])
    agents = [a for _, a in won]
    assert len(agents) == len(set(agents)) == 12
    callers_won = set(c for c, _ in won)
    assert callers_won == set(callers[:len(callers_won)])  # in line order (replies may interleave)
    if strategy != "ring_all":
        assert len(won) == len(callers_won) == 12  # each caller once
        # caller k in line got the k-th agent: the lowest tier first whatever the strategy
        in_line = [a for _, a in sorted(won, key=lambda w: callers.index(w[0]))]
        assert [int(a[1:]) % 3 for a in in_line] == [0] * 4 + [1] * 4 + [2] * 4


def test_given_callers_behind_the_first_when_they_claim_first_then_each_gets_the_agent_its_place_gives_it(presence):
    """A burst is served in one claim round: caller k takes the k-th agent in the strategy's
    order; the first caller still gets the best one when it claims later."""
    account = str(uuid.uuid4())
    members = _members(presence, account, 3, tiers=[1, 1, 2])
    for n in range(4):
        presence.join(account, "q", f"call-{n}", enqueued_ms=5000 + n)
    assert presence.claim(account, "q", "call-3", members) is None  # 4th in line, 3 agents idle
    assert presence.claim(account, "q", "call-2", members) == "a02"  # the tier-2 agent: third
    assert presence.claim(account, "q", "call-1", members) == "a01"
    assert presence.claim(account, "q", "call-0", members) == "a00"
    assert presence.claim(account, "q", "call-3", members) is None  # nobody idle


def test_given_ring_all_then_only_the_first_caller_in_line_claims(presence):
    account = str(uuid.uuid4())
    members = _members(presence, account, 3)
    for n in range(2):
        presence.join(account, "q", f"call-{n}", enqueued_ms=5000 + n)
    assert presence.claim_agents(account, "q", "call-1", members, strategy="ring_all") == []
    assert len(presence.claim_agents(account, "q", "call-0", members, strategy="ring_all")) == 3
