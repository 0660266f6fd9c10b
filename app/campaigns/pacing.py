"""How many calls to place now: the pacing of progressive, power and predictive campaigns.

Pure and clock-injected: every function takes ``now`` (seconds, any monotonic origin) and the
numbers it decides on; nothing here reads a clock, a database or the network. The dialer
process and ``benchmarks/dialer_bench.py`` drive the same code.

- **progressive**: one call per ready agent, the agent reserved before dialling (a ringing call
  keeps its agent), so a live answer always has an agent and nothing is abandoned.
- **power**: ``ratio`` lines per ready agent (a campaign setting), minus the calls ringing.
- **predictive**: the number of lines comes from a model of the next few seconds, built from
  what this campaign measured over its rolling window (``PacingStats``): the chance that a dial
  reaches a person, how long people (and everything else: machines, busy, no answer) take to
  resolve, and the distributions of talk and wrap-up times. Each call answered whose AMD verdict is pending
  (``Lines.answered_elapsed``) counts as a person at the measured share of answers, arriving
  within the measured verdict delay or not at all. Each ringing call counts with its
  *own* chance of still becoming a person given how long it has rung (a call ringing for 20 s,
  when people answer within 15 s, will not be one); each busy agent with its chance of being
  free in time given where it is: talking for so long (the rest of its talk, then a wrap-up),
  or so far into its wrap-up (free at an almost known moment — the signal that lets it dial
  ahead for agents about to be free). The dialer places the most calls for which the
  *expected* share of live answers finding no agent stays within a planned share of the
  cap, and that plan is corrected by what is measured towards a setpoint under the cap with a
  binomial margin (``PacingStats.setpoint``), and shrunk when the window has fewer than
  ``HEADROOM_ABANDONS`` abandons left before its cap. Above the cap — the abandon rate measured over
  the rolling window — it falls back to 1:1 at once, until the rate is back under the cap.
  docs/campaigns.md "Pacing" compares this with VICIdial.
"""
from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from app import limits

# The model is approximate (answers and free agents taken as independent, the calls of the
# next seconds unseen), so what it plans for is corrected by what happens — a stochastic
# approximation on every live answer: the planned share of the cap (``gain``) starts low, grows
# a little with each connected answer, shrinks by a fifth with each abandon, and settles where
# the measured abandon rate is the setpoint (``PacingStats.setpoint``): the highest true rate p
# whose window of n answers still stays under the cap with probability 95 %, i.e.
# p + ABANDON_Z·sqrt(p(1-p)/n) = cap (binomial, normal approximation). A small campaign (few
# answers per window) thus aims lower than a big one, whose measured rate wanders less; the
# hard fallback (1:1 above the cap) is left for accidents, not for routine.
ABANDON_Z = 1.645
# near the cap, plan for fewer abandons: with fewer than this many abandons left before the
# window's rate is over the cap, the planned share shrinks in proportion (0 left: none planned)
HEADROOM_ABANDONS = 2.0
GAIN_START, GAIN_RANGE, GAIN_STEP = 0.25, (0.02, 4.0), 0.2
# seconds ahead at which predictive pacing compares answers with free agents: from "now" to
# past the slowest answer people usually give (ring times of 3-20 s)
CHECKPOINTS_SECONDS = (1.0, 2.0, 4.0, 6.0, 9.0, 12.0, 16.0, 21.0)
# samples kept per measured duration (answer delays, other outcomes' delays, handle times)
SAMPLES = 300
# z of the one-sided upper confidence bound on the answer rate: a dialer that overestimates
# answers dials fewer lines (safe), one that underestimates them abandons people
ANSWER_RATE_Z = 1.0
# where a talking agent's coming wrap-up is sampled (mid-points of fifths of the measured ones)
WRAP_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)


@dataclass(frozen=True)
class Lines:
    """What the dialer sees at one instant of one campaign."""
    ready_agents: int  # logged in, not on a call nor in wrap-up (includes agents reserved for a ringing call)
    busy_elapsed: tuple[float, ...]  # per agent on a call (or in wrap-up, see below): seconds since its call was connected
    ringing_elapsed: tuple[float, ...]  # per call placed whose outcome is not known yet: seconds since dialled
    waiting: int = 0  # live answers waiting for an agent (inside the abandon grace)
    # per agent in wrap-up: seconds since its call ended. None: the dialer does not tell wrap-up
    # apart, and ``busy_elapsed`` holds talking and wrapping agents alike. A tuple (even empty):
    # ``busy_elapsed`` holds the talking agents only. Worth telling: an agent in a 10 s wrap-up
    # is free at a known moment, one still talking at a guessed one.
    wrapping_elapsed: tuple[float, ...] | None = None
    # per call answered whose AMD verdict is not in yet: seconds since the answer. None: the
    # dialer does not tell them apart, and ``ringing_elapsed`` holds them with the calls still
    # ringing. A tuple (even empty): ``ringing_elapsed`` holds the unanswered calls only.
    # Worth telling: an answered call is a person at the measured share of answers (not of
    # dials), and is one within a second or two or not at all.
    answered_elapsed: tuple[float, ...] | None = None

    @property
    def ringing(self) -> int:
        """Calls placed whose outcome is not known yet, answered (AMD pending) or not."""
        return len(self.ringing_elapsed) + len(self.answered_elapsed or ())


@dataclass(frozen=True)
class Decision:
    dial: int
    rule: str  # progressive | power | predictive | warmup | over_cap
    detail: str = ""


class Durations:
    """The last ``SAMPLES`` values of one measured duration, kept sorted for tail queries."""

    def __init__(self) -> None:
        self._sorted: list[float] = []
        self._order: deque[float] = deque()

    def add(self, seconds: float) -> None:
        self._order.append(seconds)
        bisect.insort(self._sorted, seconds)
        if len(self._order) > SAMPLES:
            self._sorted.pop(bisect.bisect_left(self._sorted, self._order.popleft()))

    def __len__(self) -> int:
        return len(self._sorted)

    def mean(self) -> float:
        return sum(self._sorted) / len(self._sorted) if self._sorted else 0.0

    def longer_than(self, seconds: float) -> int:
        return len(self._sorted) - bisect.bisect_right(self._sorted, seconds)

    def within(self, elapsed: float, more: float) -> float:
        """P(value ≤ elapsed + more | value > elapsed); 0.0 when no sample is that long."""
        longer = self.longer_than(elapsed)
        return (longer - self.longer_than(elapsed + more)) / longer if longer else 0.0

    def quantiles(self, shares: tuple[float, ...]) -> list[float]:
        """The samples at these shares (0 ≤ share < 1) of the sorted values."""
        return [self._sorted[min(len(self._sorted) - 1, int(q * len(self._sorted)))] for q in shares]

    def survival(self, seconds: float) -> float:
        """Share of the samples longer than ``seconds`` (1.0 with no sample)."""
        return self.longer_than(seconds) / len(self._sorted) if self._sorted else 1.0


@dataclass
class PacingStats:
    """Rolling measurements of one campaign; ``now`` is always passed in."""
    cap_percent: float = limits.CAMPAIGN_ABANDON_CAP_PERCENT_DEFAULT
    window_seconds: float = limits.CAMPAIGN_PACING_WINDOW_SECONDS
    gain: float = GAIN_START  # the share of the cap predictive decisions plan for (see GAIN_STEP)
    _outcomes: deque[tuple[float, bool]] = field(default_factory=deque)  # (at, reached a person)
    _answers: deque[tuple[float, bool]] = field(default_factory=deque)  # (at, abandoned)
    human_delays: Durations = field(default_factory=Durations)  # dial → HUMAN verdict
    other_delays: Durations = field(default_factory=Durations)  # dial → any other outcome
    _answered: deque[tuple[float, bool]] = field(default_factory=deque)  # (at, a person) per answered dial
    human_rings: Durations = field(default_factory=Durations)  # dial → a person's answer
    other_rings: Durations = field(default_factory=Durations)  # dial → a machine's answer, or the end unanswered
    human_verdicts: Durations = field(default_factory=Durations)  # answer → HUMAN verdict
    machine_verdicts: Durations = field(default_factory=Durations)  # answer → any other verdict
    handles: Durations = field(default_factory=Durations)  # connect → agent ready again
    talks: Durations = field(default_factory=Durations)  # connect → hang-up
    wrap_ups: Durations = field(default_factory=Durations)  # hang-up → agent ready again

    def _trim(self, now: float) -> None:
        horizon = now - self.window_seconds
        for events in (self._outcomes, self._answers, self._answered):
            while events and events[0][0] < horizon:
                events.popleft()

    def dial_outcome(self, now: float, *, human: bool, delay: float, answered_after: float | None = None) -> None:
        """One dial resolved ``delay`` s after it was placed: a person (AMD HUMAN) or not
        (busy, no answer, machine, failed); ``answered_after``: the seconds from the dial to
        its answer, None when it was not answered (or its answer was not timed)."""
        self._outcomes.append((now, human))
        (self.human_delays if human else self.other_delays).add(delay)
        (self.human_rings if human else self.other_rings).add(delay if answered_after is None else answered_after)
        if answered_after is not None:
            self._answered.append((now, human))
            (self.human_verdicts if human else self.machine_verdicts).add(max(0.0, delay - answered_after))
        self._trim(now)

    def handled(self, *, talk: float, wrap_up: float) -> None:
        """An agent is ready again after ``talk`` s on the call and ``wrap_up`` s after it."""
        self.handles.add(talk + wrap_up)
        self.talks.add(talk)
        self.wrap_ups.add(wrap_up)

    def live_answer(self, now: float, *, abandoned: bool) -> None:
        """A person answered and was connected to an agent, or was abandoned."""
        self._answers.append((now, abandoned))
        self._trim(now)
        error = self.setpoint() - (1.0 if abandoned else 0.0)
        self.gain = min(GAIN_RANGE[1], max(GAIN_RANGE[0], self.gain * math.exp(GAIN_STEP * error)))

    def setpoint(self) -> float:
        """The abandon rate to aim at: the highest p with p + z·sqrt(p(1-p)/n) ≤ cap for the
        n live answers of the window (at least CAMPAIGN_ABANDON_RATE_MIN_ANSWERS)."""
        cap = self.cap_percent / 100
        n = max(len(self._answers), limits.CAMPAIGN_ABANDON_RATE_MIN_ANSWERS)
        # (1 + z²/n)p² - (2cap + z²/n)p + cap² = 0, the smaller root (the one under the cap)
        a, b = 1 + ABANDON_Z ** 2 / n, 2 * cap + ABANDON_Z ** 2 / n
        return (b - math.sqrt(b * b - 4 * a * cap * cap)) / (2 * a)

    def abandons_left(self, now: float) -> float:
        """How many more abandons the window takes before its rate is over the cap (with the
        answers it holds now, at least ``CAMPAIGN_ABANDON_RATE_MIN_ANSWERS``)."""
        self._trim(now)
        abandoned = sum(1 for _, was in self._answers if was)
        return self.cap_percent / 100 * max(len(self._answers), limits.CAMPAIGN_ABANDON_RATE_MIN_ANSWERS) - abandoned

    def abandon_rate(self, now: float) -> float:
        """Abandoned / live answers over the window; while the window holds fewer than
        ``CAMPAIGN_ABANDON_RATE_MIN_ANSWERS`` answers, over that many (one abandon among the
        first ten answers is not a 10 % rate, and must not stop predictive dialling for the
        next hour)."""
        self._trim(now)
        abandoned = sum(1 for _, was in self._answers if was)
        return abandoned / max(len(self._answers), limits.CAMPAIGN_ABANDON_RATE_MIN_ANSWERS)

    def outcomes(self) -> int:
        return len(self._outcomes)

    def answer_rate_upper(self) -> float:
        """Upper confidence bound (Wilson, z = ANSWER_RATE_Z) of P(a dial reaches a person)."""
        return _wilson_upper(sum(1 for _, human in self._outcomes if human), len(self._outcomes))

    def p_person(self, p_human: float, rung: float, *, unanswered: bool = False) -> float:
        """P(a call still unresolved after ``rung`` s becomes a person), by Bayes from the
        measured delays of people and of every other outcome; ``unanswered``: the call is
        known not to have answered yet, weighed by the measured times to the answer (people,
        machines) or to the end (busy, no answer) instead."""
        people, others = (self.human_rings, self.other_rings) if unanswered else (self.human_delays, self.other_delays)
        human = p_human * people.survival(rung)
        other = (1 - p_human) * others.survival(rung)
        return human / (human + other) if human + other > 0 else 0.0

    def answered_person_upper(self) -> float:
        """Upper confidence bound (Wilson, z = ANSWER_RATE_Z) of P(an answered dial is a
        person); 1.0 before any answer is measured (every answer a person: the safe side)."""
        return _wilson_upper(sum(1 for _, human in self._answered if human), len(self._answered))

    def p_answered_person(self, p_person: float, waited: float) -> float:
        """P(a call answered ``waited`` s ago, AMD verdict still pending, is a person), by
        Bayes from the measured verdict delays; ``p_person`` once the wait is longer than
        every measured verdict (a late verdict is not taken for a machine's)."""
        human = p_person * self.human_verdicts.survival(waited)
        other = (1 - p_person) * self.machine_verdicts.survival(waited)
        return human / (human + other) if human + other > 0 else p_person

    def p_free_within(self, elapsed: float, horizon: float) -> float:
        """P(a call connected ``elapsed`` s ago is handled within ``horizon`` more seconds),
        from the measured handle times (conditional on having lasted ``elapsed``)."""
        if self.handles.longer_than(elapsed) == 0:
            # lasted longer than every sample: assume an exponential tail with the mean
            mean = self.handles.mean()
            return 1.0 - math.exp(-horizon / mean) if mean > 0 else 1.0
        return self.handles.within(elapsed, horizon)

    def p_talker_free_within(self, talked: float, horizon: float) -> float:
        """P(an agent talking for ``talked`` s is ready within ``horizon`` more seconds): the
        rest of its talk (conditional on having lasted ``talked``) plus a wrap-up, taken at
        WRAP_QUANTILES of the measured wrap-ups."""
        if not self.wrap_ups:
            return self.p_free_within(talked, horizon)
        wraps = self.wrap_ups.quantiles(WRAP_QUANTILES)
        return sum(_within_or_tail(self.talks, talked, horizon - w) for w in wraps) / len(wraps)

    def p_wrapper_free_within(self, wrapped: float, horizon: float) -> float:
        """P(an agent ``wrapped`` s into its wrap-up is ready within ``horizon`` more seconds);
        0.0 before any wrap-up is measured (``handled``): not counted on, rather than guessed."""
        return _within_or_tail(self.wrap_ups, wrapped, horizon) if self.wrap_ups else 0.0


def _wilson_upper(hits: int, n: int) -> float:
    """Upper Wilson bound (z = ANSWER_RATE_Z) of a share measured as ``hits`` of ``n``; 1.0 for n = 0."""
    if n == 0:
        return 1.0
    p, z2 = hits / n, ANSWER_RATE_Z ** 2
    centre = p + z2 / (2 * n)
    spread = ANSWER_RATE_Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return min(1.0, (centre + spread) / (1 + z2 / n))


def _within_or_tail(durations: Durations, elapsed: float, more: float) -> float:
    """``durations.within``; past every sample, an exponential tail with the samples' mean."""
    if more <= 0:
        return 0.0
    if durations.longer_than(elapsed) == 0:
        mean = durations.mean()
        return 1.0 - math.exp(-more / mean) if mean > 0 else 1.0
    return durations.within(elapsed, more)


def progressive(lines: Lines) -> Decision:
    return Decision(max(0, lines.ready_agents - lines.ringing - lines.waiting), "progressive")


def power(lines: Lines, ratio: float) -> Decision:
    return Decision(max(0, math.floor(ratio * lines.ready_agents) - lines.ringing - lines.waiting), "power")


def _add_bernoulli(pmf: list[float], p: float) -> list[float]:
    """The distribution of X + B, B ~ Bernoulli(p) independent of X ~ ``pmf``."""
    out = [0.0] * (len(pmf) + 1)
    for k, weight in enumerate(pmf):
        out[k] += weight * (1 - p)
        out[k + 1] += weight * p
    return out


def _poisson_binomial(chances: list[float]) -> list[float]:
    pmf = [1.0]
    for p in chances:
        pmf = _add_bernoulli(pmf, p)
    return pmf


def expected_overflow(answers_pmf: list[float], free_pmf: list[float]) -> float:
    """E[(answers - free agents)+] for independent counts: live answers that find no agent."""
    size = len(answers_pmf)
    tail_mass, tail_first = [0.0] * (size + 1), [0.0] * (size + 1)
    for h in range(size - 1, -1, -1):
        tail_mass[h] = tail_mass[h + 1] + answers_pmf[h]
        tail_first[h] = tail_first[h + 1] + h * answers_pmf[h]
    return sum(weight * (tail_first[f + 1] - f * tail_mass[f + 1])
               for f, weight in enumerate(free_pmf) if weight and f + 1 < size)


def predictive(lines: Lines, stats: PacingStats, now: float, *, cap_percent: float) -> Decision:
    """The most new calls whose live answers are expected to find a free agent often enough:
    at each checkpoint ``t`` of the next seconds the answers that arrive by ``t`` are compared
    with the agents free by ``t`` plus the abandon grace (an answer may wait that long), and
    the expected overflow summed over the checkpoints must stay within the planned share of
    the cap. Checking several times (not one horizon) matters: agents freeing in 12 s do not
    help a call answered in 3 s."""
    cap = cap_percent / 100
    rate = stats.abandon_rate(now)
    if rate > cap:
        return Decision(progressive(lines).dial, "over_cap", f"abandon rate {rate:.2%} > cap {cap:.2%}")
    if stats.outcomes() < limits.CAMPAIGN_PACING_WARMUP_OUTCOMES:
        return Decision(progressive(lines).dial, "warmup")
    # talk times not measured enough yet (the first calls to end are the short ones): the
    # agents still talking count as never free in time, so the lines placed are those the
    # ready agents and the agents in wrap-up can take (more than 1:1 all the same, as most
    # dials reach no one)
    rule = "predictive" if len(stats.handles) >= limits.CAMPAIGN_PACING_WARMUP_HANDLES else "warmup"
    p_human = stats.answer_rate_upper()
    grace = limits.CAMPAIGN_ABANDON_CONNECT_SECONDS
    ready = max(0, lines.ready_agents - lines.waiting)
    unanswered = lines.answered_elapsed is not None
    people = [stats.p_person(p_human, rung, unanswered=unanswered) for rung in lines.ringing_elapsed]
    p_answered = stats.answered_person_upper()
    answered = [stats.p_answered_person(p_answered, waited) for waited in lines.answered_elapsed or ()]
    checkpoints = []  # (answers pmf by t, P(a new call answers by t), free agents pmf by t + grace)
    for t in CHECKPOINTS_SECONDS:
        by_t = [p * stats.human_delays.within(rung, t) for p, rung in zip(people, lines.ringing_elapsed)]
        by_t += [p * _within_or_tail(stats.human_verdicts, waited, t)
                 for p, waited in zip(answered, lines.answered_elapsed or ())]
        busy = _free_chances(lines, stats, t + grace, talkers=rule == "predictive")
        free = [0.0] * ready + _poisson_binomial(busy)
        checkpoints.append((_poisson_binomial(by_t), p_human * stats.human_delays.within(0.0, t), free))
    agents = lines.ready_agents + len(lines.busy_elapsed) + len(lines.wrapping_elapsed or ())
    room = agents * limits.CAMPAIGN_PACING_MAX_LINES_PER_AGENT - lines.ringing
    target = cap * stats.gain * min(1.0, max(0.0, stats.abandons_left(now)) / HEADROOM_ABANDONS)
    expected_answers = sum(people) + sum(answered)
    dial = 0
    while dial < room:
        trial = [(_add_bernoulli(pmf, p_new), p_new, free) for pmf, p_new, free in checkpoints]
        # the sum over checkpoints bounds E[worst checkpoint's overflow] from above (the
        # abandons are the worst deficit of answers against free agents over time)
        overflow = sum(expected_overflow(pmf, free) for pmf, _, free in trial)
        if overflow > target * (expected_answers + p_human):
            break
        checkpoints, expected_answers, dial = trial, expected_answers + p_human, dial + 1
    return Decision(dial, rule, f"p_human≤{p_human:.2f} planned {target:.2%}")


def _free_chances(lines: Lines, stats: PacingStats, horizon: float, *, talkers: bool = True) -> list[float]:
    """Each busy agent's chance of being ready within ``horizon`` s. ``talkers=False`` (the
    warm-up on handle times): agents still talking count as never free in time, but agents in
    wrap-up count all the same — when a wrap-up ends does not depend on which calls have ended
    first, so the first measured wrap-ups are not biased the way the first talk times are."""
    if lines.wrapping_elapsed is None:
        return [stats.p_free_within(e, horizon) for e in lines.busy_elapsed] if talkers else []
    talking = [stats.p_talker_free_within(e, horizon) for e in lines.busy_elapsed] if talkers else []
    return talking + [stats.p_wrapper_free_within(e, horizon) for e in lines.wrapping_elapsed]


# dialer mode -> its pacing; preview dials only when an agent accepts an offered contact
Pacer = Callable[[Lines, PacingStats, float], Decision]


def pacer_for(mode: str, *, power_ratio: float, abandon_cap_percent: float) -> Pacer:
    """The pacing function of a campaign's mode and settings (KeyError for preview/unknown)."""
    pacers: dict[str, Pacer] = {
        "progressive": lambda lines, stats, now: progressive(lines),
        "power": lambda lines, stats, now: power(lines, power_ratio),
        "predictive": lambda lines, stats, now: predictive(lines, stats, now, cap_percent=abandon_cap_percent),
    }
    return pacers[mode]
