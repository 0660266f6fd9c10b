"""Bus events → the agent's socket (app/agent_channel/relay.py), published on the real bus as
the controller and the supervisor feature publish them."""
from __future__ import annotations

import uuid

from sqlalchemy import text

from app.events.payloads import emit


def _agents(seed, api, owner_conn, *names):
    tenant = seed.tenant()
    for name in names:
        seed.user(tenant, name, agent=True)
    ids = {name: str(owner_conn.execute(text("SELECT id FROM agents WHERE user_id = :u"),
                                        {"u": tenant.users[name].id}).scalar_one()) for name in names}
    return tenant, ids


def _offer(tenant, agent_id: str, call_id: str) -> None:
    emit("agent.offer", {"callId": call_id, "queue": "support", "agentId": agent_id, "queueId": str(uuid.uuid4()),
                         "waitedSeconds": 1, "timeoutSeconds": 20, "from": "+15550001111"},
         account_id=tenant.account_id)


def test_given_a_ring_all_offer_when_another_agent_answers_then_the_offer_is_withdrawn_answered_elsewhere(
        channel_server, seed, api, owner_conn):
    tenant, ids = _agents(seed, api, owner_conn, "ana", "ben")
    server = channel_server()
    ana, ben = server.connect(tenant.host), server.connect(tenant.host)
    ana.auth(api.mint(tenant, "ana", session="agent"))
    ben.auth(api.mint(tenant, "ben", session="agent"))
    call_id = str(uuid.uuid4())
    _offer(tenant, ids["ana"], call_id)
    _offer(tenant, ids["ben"], call_id)
    assert ana.expect("offer")["from"] == "+15550001111"
    ben.expect("offer")
    emit("agent.accept", {"callId": call_id, "agentId": ids["ben"]}, account_id=tenant.account_id)
    assert ben.expect("call")["phase"] == "connected"
    withdrawn = ana.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert withdrawn["reason"] == "answered_elsewhere" and withdrawn["offerId"] == call_id


def test_given_supervisor_events_naming_the_agent_then_supervisor_messages_arrive(channel_server, seed, api, owner_conn):
    tenant, ids = _agents(seed, api, owner_conn, "cy")
    client = channel_server().connect(tenant.host)
    client.auth(api.mint(tenant, "cy", session="agent"))
    call_id, supervisor = str(uuid.uuid4()), str(uuid.uuid4())
    emit("call.control.start", {"callId": call_id, "agentId": ids["cy"], "mode": "listen",
                                "supervisorId": supervisor}, account_id=tenant.account_id)
    started = client.expect("supervisor")
    assert (started["active"], started["mode"], started["supervisorId"], started["callId"]) == (
        True, "listen", supervisor, call_id)
    emit("agent.supervisor.coaching", {"callId": call_id, "agentId": ids["cy"], "mode": "whisper",
                                       "supervisorId": supervisor, "coaching": True}, account_id=tenant.account_id)
    coaching = client.expect("supervisor", lambda m: m["event"] == "agent.supervisor.coaching")
    assert (coaching["mode"], coaching["active"]) == ("whisper", True)
    emit("agent.supervisor.coaching", {"callId": call_id, "agentId": ids["cy"], "mode": "listen",
                                       "supervisorId": supervisor, "coaching": False},
         account_id=tenant.account_id)
    assert client.expect("supervisor", lambda m: m["event"] == "agent.supervisor.coaching")["active"] is False
    emit("call.control.stop", {"callId": call_id, "agentId": ids["cy"], "mode": "whisper",
                               "supervisorId": supervisor}, account_id=tenant.account_id)
    assert client.expect("supervisor", lambda m: m["event"] == "call.control.stop")["active"] is False


def test_given_an_event_of_another_account_naming_the_same_agent_id_then_it_is_not_delivered(
        channel_server, seed, api, owner_conn):
    tenant, ids = _agents(seed, api, owner_conn, "dee")
    client = channel_server().connect(tenant.host)
    client.auth(api.mint(tenant, "dee", session="agent"))
    other = seed.tenant()
    _offer(other, ids["dee"], str(uuid.uuid4()))  # a forged or mistaken event: other account
    mine = str(uuid.uuid4())
    _offer(tenant, ids["dee"], mine)
    assert client.expect("offer")["offerId"] == mine  # the foreign one never arrived first
    assert [m for m in client.seen if m["type"] == "offer"] == [client.seen[-1]]


def test_given_a_connected_agent_when_its_call_is_transferred_then_call_phase_transferred_with_the_target(
        channel_server, seed, api, owner_conn):
    tenant, ids = _agents(seed, api, owner_conn, "ana", "ben")
    server = channel_server()
    ana = server.connect(tenant.host)
    ana.auth(api.mint(tenant, "ana", session="agent"))
    call_id = str(uuid.uuid4())
    _offer(tenant, ids["ana"], call_id)
    ana.expect("offer")
    emit("agent.accept", {"callId": call_id, "agentId": ids["ana"]}, account_id=tenant.account_id)
    assert ana.expect("call")["phase"] == "connected"
    to = {"type": "agent", "agentId": ids["ben"]}
    emit("call.transferred", {"callId": call_id, "kind": "blind", "from": {"agentId": ids["ana"]}, "to": to,
                              "by": {"agentId": ids["ana"]}}, account_id=tenant.account_id)
    moved = ana.expect("call", lambda m: m["phase"] == "transferred")
    assert (moved["callId"], moved["to"], moved["kind"]) == (call_id, to, "blind")


def test_given_a_transfer_command_with_a_bad_target_or_no_call_then_validation_failed_or_no_call(
        channel_server, seed, api, owner_conn):
    tenant, _ids = _agents(seed, api, owner_conn, "ana")
    ana = channel_server().connect(tenant.host)
    ana.auth(api.mint(tenant, "ana", session="agent"))
    bad = [{"type": "pstn", "number": "123"}, {"type": "number", "number": "12;x"},
           {"type": "sip", "uri": "alice@example.com"}, {"type": "agent", "agentId": "ana"},
           {"type": "queue", "name": "support", "extra": 1}, "support"]
    for target in bad:
        ack = ana.command("transfer", target=target)
        assert ack["ok"] is False and ack["error"]["code"] == "validation_failed", (target, ack)
    ack = ana.command("transfer", target={"type": "queue", "name": "support"})
    assert ack["error"]["code"] == "no_call"


def test_given_consult_commands_with_a_queue_or_bad_target_or_no_call_then_validation_failed_or_no_call(
        channel_server, seed, api, owner_conn):
    tenant, _ids = _agents(seed, api, owner_conn, "ana")
    ana = channel_server().connect(tenant.host)
    ana.auth(api.mint(tenant, "ana", session="agent"))
    for target in ({"type": "queue", "name": "support"}, {"type": "sip", "uri": "alice@example.com"}, None):
        ack = ana.command("consult", target=target)
        assert ack["ok"] is False and ack["error"]["code"] == "validation_failed", (target, ack)
    for command, fields in (("consult", {"target": {"type": "number", "number": "+15551230000"}}),
                            ("completeTransfer", {}), ("cancelConsult", {})):
        ack = ana.command(command, **fields)
        assert ack["error"]["code"] == "no_call", (command, ack)


def _ben_signed_in(channel_server, seed, api, owner_conn):
    """Agents ana and ben; ben's channel connected and signed in. Returns (tenant, ids, ben)."""
    tenant, ids = _agents(seed, api, owner_conn, "ana", "ben")
    ben = channel_server().connect(tenant.host)
    ben.auth(api.mint(tenant, "ben", session="agent"))
    return tenant, ids, ben


def _consult_offer(tenant, agent_id: str, from_agent: str, call_id: str) -> None:
    emit("agent.consult.offer", {"callId": call_id, "agentId": agent_id, "fromAgentId": from_agent,
                                 "legId": str(uuid.uuid4()), "from": "+15550001111", "to": "+15550002222",
                                 "timeoutSeconds": 30}, account_id=tenant.account_id)


def test_given_a_consulted_agent_when_it_accepts_and_the_transfer_completes_then_it_has_the_call_connected(
        channel_server, seed, api, owner_conn):
    tenant, ids, ben = _ben_signed_in(channel_server, seed, api, owner_conn)
    call_id = str(uuid.uuid4())
    _consult_offer(tenant, ids["ben"], ids["ana"], call_id)
    offer = ben.expect("offer")
    assert (offer["kind"], offer["phase"], offer["offerId"], offer["callId"]) == ("consult", "ringing", call_id, call_id)
    assert (offer["fromAgentId"], offer["from"], offer["to"], offer["timeoutSeconds"]) == \
        (ids["ana"], "+15550001111", "+15550002222", 30)
    ack = ben.command("accept", offerId=call_id)
    assert ack["ok"] and ack["offerId"] == call_id
    assert ben.expect("call")["phase"] == "connecting"
    emit("agent.accept", {"callId": call_id, "agentId": ids["ben"], "kind": "consult"}, account_id=tenant.account_id)
    assert ben.expect("call", lambda m: m["phase"] == "connected")["callId"] == call_id
    emit("call.ended", {"callId": call_id, "hangupCause": "NORMAL_CLEARING"}, account_id=tenant.account_id)
    assert ben.expect("call", lambda m: m["phase"] == "ended")["callId"] == call_id


def test_given_a_consult_offer_when_the_consultation_is_cancelled_then_the_offer_is_withdrawn_cancelled(
        channel_server, seed, api, owner_conn):
    tenant, ids, ben = _ben_signed_in(channel_server, seed, api, owner_conn)
    call_id = str(uuid.uuid4())
    _consult_offer(tenant, ids["ben"], ids["ana"], call_id)
    ben.expect("offer")
    emit("agent.consult.withdrawn", {"callId": call_id, "agentId": ids["ben"], "reason": "cancelled"},
         account_id=tenant.account_id)
    withdrawn = ben.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert (withdrawn["offerId"], withdrawn["reason"], withdrawn["kind"]) == (call_id, "cancelled", "consult")
    assert ben.command("accept", offerId=call_id)["error"]["code"] == "no_offer"


def test_given_a_consulted_agent_when_it_rejects_then_the_controller_is_asked_and_the_offer_is_withdrawn_rejected(
        channel_server, seed, api, owner_conn, redis_client, monkeypatch):
    from app.agent_channel import commands
    from app.contact.presence import Presence
    from app.errors import Conflict
    from app.settings import get_settings

    tenant, ids, ben = _ben_signed_in(channel_server, seed, api, owner_conn)
    call_id, leg = str(uuid.uuid4()), str(uuid.uuid4())
    asked = []

    def send(_client, _prefix, account_id, call, action, params, by):
        asked.append((account_id, call, action, params, by))
        if len(asked) > 1:  # the controller: no longer this agent's ringing consultation
            raise Conflict("No consultation is offered to this agent on this call.", code="no_offer")
        return {"answered": True}

    monkeypatch.setattr(commands.live, "send", send)
    _consult_offer(tenant, ids["ben"], ids["ana"], call_id)
    ben.expect("offer")
    assert ben.command("reject", offerId=call_id)["error"]["code"] == "no_offer"  # Redis says: not consulted
    assert asked == []
    # what claim_consulted leaves in Redis: the engaged mark is the consulted leg, which names the agent
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    redis_client.set(presence.engaged_prefix(str(tenant.account_id)) + ids["ben"], leg, ex=60)
    redis_client.set(presence.consult_key(str(tenant.account_id), leg), ids["ben"], ex=60)

    ack = ben.command("reject", offerId=call_id)

    assert ack["ok"] is True and (ack["offerId"], ack["kind"]) == (call_id, "consult"), ack
    assert asked == [(str(tenant.account_id), call_id, "consult_reject", {"legId": leg}, {"agentId": ids["ben"]})]
    emit("agent.consult.withdrawn", {"callId": call_id, "agentId": ids["ben"], "reason": "rejected", "legId": leg},
         account_id=tenant.account_id)
    withdrawn = ben.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert (withdrawn["offerId"], withdrawn["reason"], withdrawn["kind"]) == (call_id, "rejected", "consult")
    assert ben.command("reject", offerId=call_id)["error"]["code"] == "no_offer"  # the controller refused


def test_given_a_consulting_agent_when_its_consultation_fails_then_consult_phase_failed_with_the_reason(
        channel_server, seed, api, owner_conn):
    tenant, ids = _agents(seed, api, owner_conn, "ana", "ben")
    ana = channel_server().connect(tenant.host)
    ana.auth(api.mint(tenant, "ana", session="agent"))
    call_id = str(uuid.uuid4())
    to = {"type": "agent", "agentId": ids["ben"]}
    emit("agent.consult.failed", {"callId": call_id, "agentId": ids["ana"], "to": to, "legId": str(uuid.uuid4()),
                                  "reason": "rejected"}, account_id=tenant.account_id)
    failed = ana.expect("consult")
    assert (failed["phase"], failed["callId"], failed["to"], failed["reason"]) == ("failed", call_id, to, "rejected")
