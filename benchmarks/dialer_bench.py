"""Campaign pacing on a simulated population (app/campaigns/pacing.py): figures, not pass/fail.

A discrete-event simulation on a fast clock drives the *real* pacing code (the same
``pacer_for`` and ``PacingStats`` the dialer uses): every simulated second the pacer is asked
how many calls to place, and every outcome is fed back to its statistics as it happens.

The population (drawn once per seed, so every mode faces the same people in the same order):
- 2,000 contacts, each dialled once (retries off: they only stretch the run over hours);
- per dial: 30 % a person answers, 20 % an answering machine, 10 % busy, 40 % no answer;
- a person or machine answers after 3-15 s of ringing (uniform); AMD gives its verdict
  after the answer (``--amd``): ``spread`` (the default) draws it from what mod_amd's
  settings imply (../shared/freeswitch/amd/amd.conf.xml): HUMAN once the greeting is followed
  by 800 ms of silence (after_greeting_silence) — a pause of 0.2-0.8 s, "Hello?" of 0.3-0.8 s,
  then 0.8 s: 1.3-2.4 s; MACHINE once the speech passes the 1.5 s greeting limit or its
  fourth word — 1.6-2.6 s. Both uniform; the measured 1.48-1.50 s (HUMAN) and 1.82 s (MACHINE)
  on the two test WAVs fall inside. ``fixed`` is the earlier model: exactly 1.5 s and 1.8 s,
  which lets a pacer tell a machine from a person by the clock alone (no real line is that
  regular). ``both`` runs the two side by side. Busy comes back after 1-3 s; no answer ends at
  the 30 s ring timeout;
- talk time log-normal, mean 90 s (sigma 0.6, at least 10 s), then 10 s of wrap-up;
- 20 agents, all logged in throughout.

A person is connected to a ready agent when AMD says HUMAN; with none ready the call waits,
and if no agent is ready within 2 s (CAMPAIGN_ABANDON_CONNECT_SECONDS) it is **abandoned**
(the safe-harbour message plays and the call ends). An agent is busy only while connected
(talk, then wrap-up); machines, busy and unanswered calls cost no agent time (except in
progressive, whose mode reserves the agent while its call rings). The pacer sees each agent as
ready, talking (seconds since connect) or in wrap-up (seconds since the hang-up), as a dialer
knows from the agents' states.

Printed per mode, over the time from the first dial to the last contact dialled (the tail
where the list has run out is left out, it is the same for every mode):
- talk share: agents' talk time / agents' logged-in time (a call going on at the last dial
  counts up to it) (the issue's goal: predictive ≥ 1.5×
  progressive, with the abandon rate ≤ 3 %);
- occupancy: (talk + wrap-up) / logged-in time;
- abandon rate: abandoned / live answers (people), over the whole run, against the cap;
- contacts per agent-hour: people connected to an agent per agent-hour;
- and the minutes it took to get through the list.

Seeds: pacing.py's constants were tuned on seeds 0-4 (``--tuning-seeds``); the figures to
quote are those of seeds 100-119 (``--held-out-seeds``), never looked at while tuning. Both
are printed, every mode facing the same population per seed.

Modes: progressive, power, predictive, and ``predictive-blind``: the same pacing not told
which calls have answered and wait for AMD's verdict (``Lines.answered_elapsed`` None, counted
as still ringing) — the pacing before that signal, side by side.

Run: python benchmarks/dialer_bench.py [--tuning-seeds A-B] [--held-out-seeds A-B] [--contacts N] [--agents N]
     [--power-ratio R] [--cap P] [--people SHARE] [--machines SHARE] [--amd spread|fixed|both]
"""
from __future__ import annotations

import argparse
import heapq
import itertools
import math
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app import limits  # noqa: E402
from app.campaigns.pacing import Lines, PacingStats, pacer_for  # noqa: E402

HUMAN, MACHINE, BUSY, NO_ANSWER = "human", "machine", "busy", "no_answer"
PEOPLE_SHARE, MACHINE_SHARE, BUSY_SHARE = 0.30, 0.20, 0.10  # the rest: no answer
RING_SECONDS = (3.0, 15.0)
AMD_HUMAN_SECONDS, AMD_MACHINE_SECONDS = 1.5, 1.8  # --amd fixed: the figures measured on the test WAVs
AMD_HUMAN_SPREAD, AMD_MACHINE_SPREAD = (1.3, 2.4), (1.6, 2.6)  # --amd spread: what mod_amd's settings imply
BUSY_SECONDS = (1.0, 3.0)
RING_TIMEOUT_SECONDS = 30.0
TALK_MEAN_SECONDS, TALK_SIGMA, TALK_MIN_SECONDS = 90.0, 0.6, 10.0
WRAP_UP_SECONDS = 10.0
TICK_SECONDS = 1.0


@dataclass(frozen=True)
class Contact:
    outcome: str
    resolve_after: float  # seconds from dial to AMD verdict / busy / ring timeout
    talk: float
    answer_after: float | None = None  # seconds from dial to the answer (people and machines)


def population(seed: int, contacts: int, people: float = PEOPLE_SHARE,
               machines: float = MACHINE_SHARE, amd: str = "spread") -> list[Contact]:
    rng = random.Random(seed)
    outcomes = (HUMAN, MACHINE, BUSY, NO_ANSWER)
    weights = (people, machines, BUSY_SHARE, 1 - people - machines - BUSY_SHARE)
    mu = math.log(TALK_MEAN_SECONDS) - TALK_SIGMA ** 2 / 2  # log-normal with that mean
    people = []
    for _ in range(contacts):
        outcome = rng.choices(outcomes, weights)[0]
        ring = rng.uniform(*RING_SECONDS)
        # drawn for every contact whatever the model, so both models face the same people
        verdict = {HUMAN: rng.uniform(*AMD_HUMAN_SPREAD), MACHINE: rng.uniform(*AMD_MACHINE_SPREAD)}.get(outcome, 0.0)
        if amd == "fixed":
            verdict = {HUMAN: AMD_HUMAN_SECONDS, MACHINE: AMD_MACHINE_SECONDS}.get(outcome, 0.0)
        resolve = {HUMAN: ring + verdict, MACHINE: ring + verdict,
                   BUSY: rng.uniform(*BUSY_SECONDS), NO_ANSWER: RING_TIMEOUT_SECONDS}[outcome]
        answered = ring if outcome in (HUMAN, MACHINE) else None
        people.append(Contact(outcome, resolve, max(TALK_MIN_SECONDS, rng.lognormvariate(mu, TALK_SIGMA)), answered))
    return people


@dataclass
class Run:
    mode: str
    agents: int
    ready: int = 0
    busy_since: dict[int, float] = field(default_factory=dict)  # agent slot -> connected at (talking)
    wrapping_since: dict[int, float] = field(default_factory=dict)  # agent slot -> its call ended at
    ringing: dict[int, float] = field(default_factory=dict)  # call placed, outcome unknown -> dialled at
    answered: dict[int, float] = field(default_factory=dict)  # call answered, AMD verdict pending -> answered at
    waiting: dict[int, float] = field(default_factory=dict)  # call -> talk time, oldest first
    talks: list[tuple[float, float]] = field(default_factory=list)  # (connected at, hung up at)
    wraps: list[tuple[float, float]] = field(default_factory=list)  # (hung up at, ready at)
    connects: list[float] = field(default_factory=list)  # when each person was connected to an agent
    live: int = 0
    abandoned: int = 0
    dials: int = 0
    last_dial: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)


def simulate(mode: str, people: list[Contact], agents: int, power_ratio: float, cap: float,
             answers_seen: bool = True) -> Run:
    """``answers_seen=False``: the pacer is not told which calls have answered and wait for
    AMD's verdict (``Lines.answered_elapsed`` None): they count as still ringing."""
    pacer = pacer_for(mode, power_ratio=power_ratio, abandon_cap_percent=cap)
    stats = PacingStats(cap_percent=cap)
    run = Run(mode, agents, ready=agents)
    events: list[tuple[float, int, str, object]] = []
    order = itertools.count()
    slots = itertools.count()
    todo = iter(people)
    left = len(people)

    def at(when: float, kind: str, data: object = None) -> None:
        heapq.heappush(events, (when, next(order), kind, data))

    def connect(now: float, talk: float) -> None:
        run.ready -= 1
        run.connects.append(now)
        slot = next(slots)
        run.busy_since[slot] = now
        at(now + talk, "talk_end", (slot, talk))

    at(0.0, "tick")
    now = 0.0
    while events:
        now, _, kind, data = heapq.heappop(events)
        if kind == "tick":
            # seen: a call answered and waiting for AMD's verdict is told apart from the ringing
            ringing = tuple(now - t for call, t in run.ringing.items() if not answers_seen or call not in run.answered)
            answered = tuple(now - t for t in run.answered.values())
            lines = Lines(run.ready, tuple(now - t for t in run.busy_since.values()),
                          ringing, len(run.waiting),
                          tuple(now - t for t in run.wrapping_since.values()),
                          answered_elapsed=answered if answers_seen else None)
            decision = pacer(lines, stats, now)
            run.rules[decision.rule] = run.rules.get(decision.rule, 0) + decision.dial
            for _ in range(min(decision.dial, left)):
                contact = next(todo)
                left -= 1
                call = run.dials
                run.dials += 1
                run.ringing[call] = now
                run.last_dial = now
                at(now + contact.resolve_after, "resolved", (call, contact))
                if contact.answer_after is not None:
                    at(now + contact.answer_after, "answered", call)
            if left:
                at(now + TICK_SECONDS, "tick")
        elif kind == "resolved":
            call, contact = data  # type: ignore[misc]
            human = contact.outcome == HUMAN
            run.answered.pop(call, None)
            stats.dial_outcome(now, human=human, delay=now - run.ringing.pop(call), answered_after=contact.answer_after)
            if human:
                run.live += 1
                if run.ready > 0 and not run.waiting:
                    stats.live_answer(now, abandoned=False)
                    connect(now, contact.talk)
                else:
                    run.waiting[call] = contact.talk
                    at(now + limits.CAMPAIGN_ABANDON_CONNECT_SECONDS, "grace_over", call)
        elif kind == "answered":
            run.answered[data] = now  # type: ignore[index]
        elif kind == "grace_over":
            if run.waiting.pop(data, None) is not None:  # type: ignore[call-overload]
                run.abandoned += 1
                stats.live_answer(now, abandoned=True)
        elif kind == "talk_end":
            slot, talk = data  # type: ignore[misc]
            connected_at = run.busy_since.pop(slot)
            run.wrapping_since[slot] = now
            run.talks.append((connected_at, now))
            at(now + WRAP_UP_SECONDS, "wrap_end", (slot, talk))
        elif kind == "wrap_end":
            slot, talk = data  # type: ignore[misc]
            run.wraps.append((now - WRAP_UP_SECONDS, now))
            del run.wrapping_since[slot]
            run.ready += 1
            stats.handled(talk=talk, wrap_up=WRAP_UP_SECONDS)
            if run.waiting:
                oldest = next(iter(run.waiting))
                stats.live_answer(now, abandoned=False)
                connect(now, run.waiting.pop(oldest))
    return run


def _inside(spans: list[tuple[float, float]], end: float) -> float:
    """The time the spans cover before ``end``."""
    return sum(max(0.0, min(stop, end) - start) for start, stop in spans)


def measure(run: Run) -> dict[str, float]:
    """Figures over the measured period, from the first dial (0) to the last one: talk and
    wrap-up are cut at its end once the run is over (a call still going on at the last dial
    counts up to it), connections counted within it."""
    period = run.last_dial
    agent_time = run.agents * period
    talk = _inside(run.talks, period)
    return {
        "talk_share": talk / agent_time,
        "occupancy": (talk + _inside(run.wraps, period)) / agent_time,
        "abandon": run.abandoned / run.live if run.live else 0.0,
        "per_agent_hour": sum(1 for at in run.connects if at <= period) / (agent_time / 3600),
        "minutes": period / 60,
        "dials": run.dials,
    }


def _seeds(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def _row(label: str, seeds: range, rows: list[dict[str, float]], base: float) -> str:
    def cell(key: str, scale: float = 1.0, fmt: str = "{:.1f}") -> str:
        values = [r[key] * scale for r in rows]
        return f"{fmt.format(statistics.mean(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"

    share = statistics.mean(r["talk_share"] for r in rows)
    span = f"{seeds.start}-{seeds.stop - 1}"
    return (f"{label:<16} {span:<9} {cell('talk_share', 100):>18} {cell('occupancy', 100):>18} "
            f"{cell('abandon', 100, '{:.2f}'):>20} {cell('per_agent_hour'):>20} "
            f"{statistics.mean(r['minutes'] for r in rows):>8.1f} {share / base:>14.2f}x")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuning-seeds", type=_seeds, default=_seeds("0-4"),
                        help="seeds the constants of pacing.py were tuned on (FIRST-LAST)")
    parser.add_argument("--held-out-seeds", type=_seeds, default=_seeds("100-119"),
                        help="seeds never looked at while tuning: the figures to report (FIRST-LAST)")
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--power-ratio", type=float, default=limits.CAMPAIGN_POWER_RATIO_DEFAULT)
    parser.add_argument("--cap", type=float, default=limits.CAMPAIGN_ABANDON_CAP_PERCENT_DEFAULT)
    parser.add_argument("--people", type=float, default=PEOPLE_SHARE, help="share of dials a person answers")
    parser.add_argument("--machines", type=float, default=MACHINE_SHARE, help="share answered by a machine")
    parser.add_argument("--amd", choices=("spread", "fixed", "both"), default="spread",
                        help="AMD verdict delays: drawn from mod_amd's settings, fixed at the test WAVs' figures, or both")
    args = parser.parse_args(argv)
    # predictive-blind: predictive not told which calls answered and wait for AMD (counted as ringing)
    modes = ("progressive", "power", "predictive-blind", "predictive")
    print(f"{args.contacts} contacts, {args.agents} agents, {args.people:.0%} people, {args.machines:.0%} machines, "
          f"power ratio {args.power_ratio}, abandon cap {args.cap} %; mean (min-max over seeds)")
    print(f"{'mode':<16} {'seeds':<9} {'talk share %':>18} {'occupancy %':>18} {'abandon rate %':>20} "
          f"{'contacts/agent-h':>20} {'minutes':>8} {'vs progressive':>15}")
    for amd in (("fixed", "spread") if args.amd == "both" else (args.amd,)):
        for seeds in (args.tuning_seeds, args.held_out_seeds):
            figures: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
            for seed in seeds:
                people = population(seed, args.contacts, args.people, args.machines, amd)
                for mode in modes:
                    pacing = mode.removesuffix("-blind")
                    figures[mode].append(measure(simulate(pacing, people, args.agents, args.power_ratio, args.cap,
                                                          answers_seen=pacing == mode)))
            base = statistics.mean(f["talk_share"] for f in figures["progressive"])
            label = "tuning" if seeds is args.tuning_seeds else "held-out"
            for mode in modes:
                print(_row(mode, seeds, figures[mode], base) + f"  {label}, AMD {amd}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
