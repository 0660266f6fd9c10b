"""``dial`` targets of type ``user`` reach a user of the call's own account directory only
(app/contact/directory.py): dialled as ``user/<sip user>@<account subdomain>``, never
``${domain_name}``; a name the directory does not hold is skipped, and a dial left with nothing
ends ``user_not_found`` (the session records it like queue_not_found)."""
from __future__ import annotations

from app.contact.directory import DirectoryEntry
from app.verbs.dial import USER_NOT_FOUND, _answering_user
from app.voice.session import FAILED_OUTCOMES
from esl.protocol import Event
from tests.simulator import Call
from tests.verbs.directory_fake import DirectoryContact


def test_given_a_user_of_the_accounts_directory_when_dialled_then_its_sip_user_at_the_account_subdomain(run_on_call):
    contact = DirectoryContact("ag0123456789ab", domain="acme")
    run = run_on_call(Call().bridge_answers(talk=0.02),
                      [{"verb": "dial", "target": [{"type": "user", "name": "ag0123456789ab"}]}], contact=contact)

    assert run.error is None and run.outcome.reason == "dial_completed"
    [bridge] = run.bridges()
    assert bridge.endswith("}user/ag0123456789ab@acme") and "${domain_name}" not in bridge
    assert contact.asked == [(run.ctx.account_id, "ag0123456789ab")]  # looked up in the call's account


def test_given_a_user_not_in_the_accounts_directory_when_dialled_then_nothing_is_bridged_and_user_not_found(run_on_call):
    """Another tenant's SIP user is not in this account's directory: the same refusal."""
    run = run_on_call(Call(), [{"verb": "dial", "target": [{"type": "user", "name": "agffffffffffff"}]}],
                      contact=DirectoryContact("ag0123456789ab"))

    assert run.error is None
    assert run.bridges() == []
    assert run.outcome.reason == USER_NOT_FOUND and USER_NOT_FOUND in FAILED_OUTCOMES
    assert run.outcome.data["skipped"] == [
        {"target": {"type": "user", "name": "agffffffffffff"}, "reason": USER_NOT_FOUND}]


def test_given_an_unknown_user_then_a_phone_target_when_dialled_then_the_user_is_skipped_and_the_rest_dialled(run_on_call):
    run = run_on_call(Call().bridge_answers(talk=0.02),
                      [{"verb": "dial", "target": [{"type": "user", "name": "nobody"},
                                                   {"type": "user", "name": "bob"}]}],
                      contact=DirectoryContact("bob", domain="acme"))

    [bridge] = run.bridges()
    assert bridge.endswith("}user/bob@acme")
    assert run.outcome.data["skipped"] == [{"target": {"type": "user", "name": "nobody"}, "reason": USER_NOT_FOUND}]


def test_given_no_directory_wired_when_dialling_a_user_then_it_is_refused_not_sent_to_domain_name(run_on_call):
    run = run_on_call(Call(), [{"verb": "dial", "target": [{"type": "user", "name": "bob"}]}])

    assert run.bridges() == [] and run.outcome.reason == USER_NOT_FOUND


def test_given_the_bridged_leg_of_a_directory_user_then_it_is_recognised_as_the_answering_agent():
    users = {"ag0123456789ab": DirectoryEntry("agent-1", "ag0123456789ab", "acme")}
    answered = Event([("Event-Name", "CHANNEL_BRIDGE"),
                      ("Other-Leg-Channel-Name", "sofia/internal/ag0123456789ab@127.0.0.1:38981")])
    carrier = Event([("Event-Name", "CHANNEL_BRIDGE"),
                     ("Other-Leg-Channel-Name", "sofia/external/15551230000@192.0.2.9")])

    assert _answering_user(answered, users).agent_id == "agent-1"
    assert _answering_user(carrier, users) is None
