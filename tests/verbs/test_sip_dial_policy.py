"""The dial verb refuses sip: targets unless the call's policy (app.calls.sip_targets, wired by
the session) admits the host: with no policy every sip: target is skipped, nothing is bridged."""
from __future__ import annotations

from app.verbs import OutcomeKind
from tests.simulator import Call


def test_given_no_policy_when_dialling_a_sip_target_then_skipped_and_nothing_bridged(run_on_call):
    run = run_on_call(Call(), [{"verb": "dial", "target": [{"type": "sip", "name": "sip:svc@127.0.0.1:5080"}]}])

    assert run.error is None
    assert all(app != "bridge" for app, _arg in run.apps())
    assert run.outcome.kind is OutcomeKind.END and run.outcome.reason == "no_route"
    assert run.outcome.data["skipped"][0]["reason"] == "sip_target_not_allowed"
