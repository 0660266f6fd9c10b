"""POST/DELETE /api/calls/:callId/supervise: who may supervise, which calls (this tenant's,
live, bridged to an agent), where the supervisor is rung, and the ``call.supervise`` command
left in the outbox for a controller. Live calls are the Redis marks the call session writes
(app/calls/supervision.py; the limiter's slot for a live call without an agent)."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from app.calls import supervision as sv
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.models import Agent
from tests.api_management.helpers import assert_error, insert


class Floor:
    """A tenant with an agent on a live call, and a supervisor whose phone is registered."""

    def __init__(self, api, seed, owner_engine, redis_client, prefix, *, licenses=None):
        self.tenant = seed.tenant() if licenses is None else seed.tenant(licenses=licenses)
        self.redis, self.prefix, self.owner_engine = redis_client, prefix, owner_engine
        self.agent_user = seed.user(self.tenant, "agent1")
        self.agent_id, self.agent_sip = self._phone(self.agent_user.id)
        self.sup_user = seed.user(self.tenant, "sup", role="supervisor")
        self.sup_agent_id, self.sup_sip = self._phone(self.sup_user.id)
        Presence(redis_client, prefix).registered(self.tenant.subdomain, self.sup_sip, 60, node="core-1")
        self.call_id = str(uuid.uuid4())
        self.trace_id = str(uuid.uuid4())
        sv.mark_agent_leg(redis_client, prefix, call_id=self.call_id, account_id=str(self.tenant.account_id),
                          agent_id=str(self.agent_id), leg=str(uuid.uuid4()), switch="core-1",
                          trace_id=self.trace_id)
        self.hold_slot(self.call_id)  # live: its controller holds a limiter slot for it
        self.supervisor = api.login(self.tenant, "sup")

    def hold_slot(self, call_id: str) -> None:
        self.redis.zadd(f"{self.prefix}limiter:account:{self.tenant.account_id}", {call_id: 1e15})

    def _phone(self, user_id) -> tuple[uuid.UUID, str]:
        agent = Agent(id=uuid.uuid4(), account_id=self.tenant.account_id, user_id=user_id,
                      sip_username="ag" + uuid.uuid4().hex[:12], sip_password_encrypted=encrypt_secret("pw-123456789"))
        insert(self.owner_engine, agent)
        return agent.id, agent.sip_username

    def commands(self) -> list[dict]:
        with self.owner_engine.connect() as conn:
            rows = conn.execute(text("SELECT body FROM event_outbox WHERE routing_key = 'call.supervise' "
                                     "AND body->>'account' = :a ORDER BY created_at"),
                                {"a": str(self.tenant.account_id)}).scalars().all()
        return [row if isinstance(row, dict) else json.loads(row) for row in rows]

    def activate(self) -> None:
        """The controller's part once the supervisor answered."""
        record = sv.read_supervision(self.redis, self.prefix, self.call_id, str(self.sup_user.id))
        from dataclasses import replace
        sv.save_supervision(self.redis, self.prefix, replace(record, state=sv.ACTIVE))


@pytest.fixture
def floor(api, seed, owner_engine, redis_client, redis_prefix) -> Floor:
    return Floor(api, seed, owner_engine, redis_client, redis_prefix)


def test_given_a_supervisor_with_a_registered_phone_when_supervising_an_agents_call_then_202_and_a_start_command(floor):
    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "whisper"})

    assert response.status_code == 202, response.get_json()
    body = response.get_json()
    assert body["state"] == "dialing" and body["mode"] == "whisper"
    assert body["agent_id"] == str(floor.agent_id)
    assert body["endpoint"] == f"user/{floor.sup_sip}@{floor.tenant.subdomain}"
    [command] = floor.commands()
    assert command["trace_id"] == floor.trace_id
    assert command["payload"] == {
        "action": "start", "supervisionId": body["supervision_id"], "callId": floor.call_id,
        "supervisorId": str(floor.sup_user.id), "agentId": str(floor.agent_id), "mode": "whisper",
        "endpoint": body["endpoint"], "timeoutSeconds": 30}


def test_given_an_admin_when_supervising_then_allowed_and_an_agent_is_refused(api, seed, floor):
    seed.user(floor.tenant, "colleague")
    colleague = api.login(floor.tenant, "colleague")

    refused = colleague.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})
    admin = api.login(floor.tenant)  # the admin has no phone of its own: names the supervisor's
    allowed = admin.post(f"/api/calls/{floor.call_id}/supervise",
                         json={"mode": "listen", "target": {"type": "user", "name": floor.sup_sip}})

    assert_error(refused, 403, "supervisor_required")
    assert allowed.status_code == 202, allowed.get_json()
    assert len(floor.commands()) == 1


def test_given_another_tenants_live_agent_call_when_supervising_then_404_and_nothing_queued(
        api, seed, owner_engine, redis_client, redis_prefix, floor):
    other = Floor(api, seed, owner_engine, redis_client, redis_prefix)

    response = floor.supervisor.post(f"/api/calls/{other.call_id}/supervise", json={"mode": "listen"})
    stop = floor.supervisor.delete(f"/api/calls/{other.call_id}/supervise")

    assert_error(response, 404, "call_not_found")
    assert_error(stop, 404, "supervision_not_found")
    assert floor.commands() == [] and other.commands() == []


def test_given_a_target_sip_user_of_another_tenant_when_supervising_then_404_never_rung(
        api, seed, owner_engine, redis_client, redis_prefix, floor):
    other = Floor(api, seed, owner_engine, redis_client, redis_prefix)

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise",
                                     json={"mode": "listen", "target": {"type": "user", "name": other.sup_sip}})

    assert_error(response, 404, "sip_user_not_found")
    assert floor.commands() == []


def test_given_an_unknown_or_ended_call_when_supervising_then_404(floor):
    sv.clear_agent_leg(floor.redis, floor.prefix, floor.call_id)  # the call ended: bridge and slot gone
    floor.redis.zrem(f"{floor.prefix}limiter:account:{floor.tenant.account_id}", floor.call_id)

    ended = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})
    unknown = floor.supervisor.post(f"/api/calls/{uuid.uuid4()}/supervise", json={"mode": "listen"})

    assert_error(ended, 404, "call_not_found")
    assert_error(unknown, 404, "call_not_found")


def test_given_an_agent_leg_mark_whose_call_holds_no_slot_when_supervising_then_404_and_the_mark_goes(floor):
    """A controller that died mid-bridge leaves the mark; its call's slot expires (no refresh)."""
    floor.redis.zrem(f"{floor.prefix}limiter:account:{floor.tenant.account_id}", floor.call_id)

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})

    assert_error(response, 404, "call_not_found")
    assert sv.read_agent_leg(floor.redis, floor.prefix, floor.call_id) is None


def test_given_a_live_call_without_an_answered_agent_when_supervising_then_409_no_agent_leg(floor):
    call_id = str(uuid.uuid4())  # e.g. waiting in a queue: it holds a limiter slot, no agent leg
    floor.hold_slot(call_id)

    response = floor.supervisor.post(f"/api/calls/{call_id}/supervise", json={"mode": "listen"})

    assert_error(response, 409, "no_agent_leg")


@pytest.mark.parametrize("since", ["x", "inf", b"\xff\xfe"], ids=["not_a_number", "infinite", "not_utf8"])
def test_given_a_malformed_agent_leg_mark_when_supervising_then_taken_as_no_agent_leg_never_500(floor, since):
    """The call still holds its limiter slot: live, with no readable agent leg -> 409."""
    floor.redis.hset(sv.agent_leg_key(floor.prefix, floor.call_id), "since", since)

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})
    stop = floor.supervisor.delete(f"/api/calls/{floor.call_id}/supervise")

    assert_error(response, 409, "no_agent_leg")
    assert_error(stop, 404, "supervision_not_found")
    assert floor.commands() == []


def test_given_a_supervisor_whose_phone_is_not_registered_when_supervising_then_409(floor):
    Presence(floor.redis, floor.prefix).unregistered(floor.tenant.subdomain, floor.sup_sip)

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})

    assert_error(response, 409, "supervisor_not_registered")
    assert floor.commands() == []


def test_given_a_supervisor_phone_registered_with_another_switch_when_supervising_then_409(floor):
    """The call is on switch core-1 (its agent-leg mark); user/ resolves only where it registered."""
    Presence(floor.redis, floor.prefix).registered(floor.tenant.subdomain, floor.sup_sip, 60, node="core-2")

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})

    assert_error(response, 409, "supervisor_on_another_switch")
    assert floor.commands() == []


def test_given_a_supervisor_without_an_agent_phone_when_supervising_without_target_then_409(api, seed, floor):
    seed.user(floor.tenant, "sup2", role="supervisor")

    response = api.login(floor.tenant, "sup2").post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "barge"})

    assert_error(response, 409, "supervisor_has_no_phone")


def test_given_the_calls_own_agent_as_target_when_supervising_then_409(floor):
    Presence(floor.redis, floor.prefix).registered(floor.tenant.subdomain, floor.agent_sip, 60)

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise",
                                     json={"mode": "listen", "target": {"type": "user", "name": floor.agent_sip}})

    assert_error(response, 409, "cannot_supervise_own_call")


@pytest.mark.parametrize("body", [
    {}, {"mode": "spy"}, {"mode": "listen", "extra": 1}, {"mode": "listen", "timeout": 1},
    {"mode": "listen", "target": {"type": "phone", "name": "15551234567"}},
    {"mode": "listen", "target": {"type": "user", "name": "a b"}},
    {"mode": "listen", "target": {"type": "user", "name": "ag1@other"}},
])
def test_given_an_invalid_body_when_supervising_then_422(floor, body):
    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json=body)

    assert_error(response, 422, "validation_failed")
    assert floor.commands() == []


def test_given_no_queue_mgmt_license_when_supervising_then_403(api, seed, owner_engine, redis_client, redis_prefix):
    floor = Floor(api, seed, owner_engine, redis_client, redis_prefix, licenses=["programmable-voice"])

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})

    assert_error(response, 403, "license_required")


def test_given_an_active_supervision_when_posting_another_mode_then_a_mode_command(floor):
    first = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"}).get_json()
    floor.activate()

    same = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})
    changed = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "barge"})

    assert same.status_code == 200 and same.get_json()["supervision_id"] == first["supervision_id"]
    assert changed.status_code == 202, changed.get_json()
    assert changed.get_json()["mode"] == "barge" and changed.get_json()["previous_mode"] == "listen"
    assert [(c["payload"]["action"], c["payload"]["mode"]) for c in floor.commands()] == [
        ("start", "listen"), ("mode", "barge")]


def test_given_a_supervisor_phone_still_ringing_when_changing_mode_then_409_not_active(floor):
    floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"})

    response = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "whisper"})

    assert_error(response, 409, "supervision_not_active")


def test_given_a_supervision_when_deleting_then_202_and_a_stop_command(floor):
    started = floor.supervisor.post(f"/api/calls/{floor.call_id}/supervise", json={"mode": "listen"}).get_json()

    response = floor.supervisor.delete(f"/api/calls/{floor.call_id}/supervise")

    assert response.status_code == 202
    stop = floor.commands()[-1]["payload"]
    assert (stop["action"], stop["supervisionId"]) == ("stop", started["supervision_id"])
