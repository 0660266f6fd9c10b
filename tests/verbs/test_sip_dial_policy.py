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


def test_given_a_saved_target_with_fs_path_when_dialled_then_skipped_invalid_even_if_its_host_is_listed(run_on_call):
    """A verb list stored before the grammar narrowed is not re-validated by the schema: the dial
    parses the URI again and never hands mod_sofia a ``;fs_path=`` (the outbound proxy)."""
    from app.verbs.dial import Dial

    uri = "sip:a;fs_path=sip%3A10.0.0.1;x=y@pbx.example.com"
    dial = Dial({"verb": "dial", "target": [{"type": "sip", "name": uri}], "timeout": 30, "record": False})
    run = run_on_call(Call(), lambda ctx: dial.execute(ctx), sip_policy=lambda _uri: None)  # host listed

    assert run.error is None
    assert run.bridges() == []
    assert run.outcome.reason == "no_route"
    assert run.outcome.data["skipped"][0]["reason"] == "sip_target_invalid"


def test_given_a_listed_target_with_port_and_transport_when_dialled_then_bridged_from_its_parts(run_on_call):
    seen = []
    run = run_on_call(Call(), [{"verb": "dial", "target": [
        {"type": "sip", "name": "sip:100@PBX.Example.com.:5080;transport=tcp"}]}],
        sip_policy=lambda uri: seen.append(uri))

    assert run.error is None
    assert [b.split("}", 1)[1] for b in run.bridges()] == ["sofia/external/100@pbx.example.com:5080;transport=tcp"]
    assert seen == ["sip:100@PBX.Example.com.:5080;transport=tcp"]  # the policy checks the same URI
