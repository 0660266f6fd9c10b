"""One handle-time sample per agent leg of a queue call (app/contact/handle_samples.py), whatever
order the hand-overs and the end of the call come in."""
from __future__ import annotations

from app.contact.handle_samples import HandleSamples


class _Stats:
    def __init__(self) -> None:
        self.samples: list[tuple[str, int, str]] = []

    def handled(self, _account, _queue, call_id, handle_ms, leg=None) -> None:
        self.samples.append((call_id, handle_ms, leg))


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_given_a_transfer_then_the_end_twice_then_one_sample_per_leg_each_measured_from_its_own_start():
    stats, clock = _Stats(), _Clock()
    samples = HandleSamples(stats, "acct", "support", "call-1", clock=clock)
    samples.start("leg-a")
    clock.now += 4
    samples.hand_over("leg-b")  # the attended transfer completed
    clock.now += 2.5
    samples.end()               # the caller hangs up
    samples.end()               # ...and the verb's other exit sees it too
    samples.start("leg-a")      # a leg already sampled never counts again
    samples.end()
    assert stats.samples == [("call-1", 4000, "leg-a"), ("call-1", 2500, "leg-b")]


def test_given_a_caller_handed_to_a_number_then_only_the_agent_leg_is_sampled():
    stats, clock = _Stats(), _Clock()
    samples = HandleSamples(stats, "acct", "support", "call-2", clock=clock)
    samples.start("leg-a")
    clock.now += 1
    samples.hand_over(None)
    clock.now += 30
    assert samples.end() is None
    assert stats.samples == [("call-2", 1000, "leg-a")]


def test_given_redis_away_then_the_sample_is_lost_and_the_call_goes_on():
    class Down(_Stats):
        def handled(self, *_args, **_kw) -> None:
            raise ConnectionError("redis away")

    samples = HandleSamples(Down(), "acct", "support", "call-3", clock=_Clock())
    samples.start("leg-a")
    assert samples.end() == 0
