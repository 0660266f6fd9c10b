"""Agents for the real-switch contact-centre tests: provisioned through the API (a user, an
agent profile in the given queues, generated SIP credentials) and registered on the switch's
``internal`` profile by a sipp phone that handles each offer with an out-of-call scenario
(``agent-answer-ooc.xml`` answers, ``agent-ring-ooc.xml`` lets it ring, ...)."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import redis

from app.contact.presence import Presence
from app.settings import get_settings
from tests.realswitch.provision import poll
from tests.realswitch.sipp import Sipp, SippProcess, free_port

PASSWORD = "agent-pass-123456"
REGISTRATION_WAIT_SECONDS = 20  # a loaded machine has taken over 10 s


@dataclass
class SipAgent:
    id: str
    sip_username: str
    sip_password: str
    domain: str
    user_id: str = ""
    username: str = ""


def presence() -> Presence:
    settings = get_settings()
    return Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)


def new_agent(tenant, queue_ids: list[str], *, prefix: str = "ag", role: str = "agent") -> SipAgent:
    """A user with ``role``, its agent profile in ``queue_ids`` and its SIP credentials."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    user = tenant.admin.post("/api/users", {"username": name, "password": PASSWORD, "role": role})
    agent = tenant.admin.post("/api/agents", {"user_id": user["id"], "queue_ids": queue_ids})
    creds = tenant.admin.post(f"/api/agents/{agent['id']}/sip-credentials", None)
    return SipAgent(agent["id"], creds["sip_username"], creds["sip_password"], creds["sip_domain"],
                    user["id"], name)


def in_directory(switch, agent: SipAgent) -> bool:
    return switch.api(f"user_exists id {agent.sip_username} {agent.domain}", check=False).strip() == "true"


def register(sipp: Sipp, switch, agent: SipAgent, offer_scenario: str = "agent-answer-ooc.xml", *,
             seconds: int) -> SippProcess:
    """A sipp phone registered as ``agent`` on ``switch``'s agent profile for ``seconds``,
    handling offers with ``offer_scenario``; returns once the registration is tracked."""
    port = free_port()
    tag = f"agent-{agent.sip_username}"
    cmd = sipp._base("agent-register.xml", port, tag) + [
        "-oocsf", str(sipp._base(offer_scenario, port, tag)[2]),
        "-s", agent.sip_username, "-au", agent.sip_username, "-ap", agent.sip_password,
        "-key", "domain", agent.domain, "-d", str(seconds * 1000), "-m", "1",
        "-trace_msg", f"127.0.0.1:{switch.ports.agent_sip}"]
    proc = SippProcess(cmd, sipp.workdir, tag).start()
    proc.port = port
    tracked = presence()
    assert poll(lambda: tracked.is_registered(agent.domain, agent.sip_username), REGISTRATION_WAIT_SECONDS), \
        f"{agent.sip_username} never registered:\n{switch.log_tail(40)}"
    return proc


def login_token(product, tenant, agent: SipAgent) -> str:
    """The Bearer token of ``agent``'s own login: the agent channel authenticates the agent
    itself, not the tenant admin who provisioned it."""
    session = product.client(tenant.subdomain, agent.username, PASSWORD)
    return session.http.headers["Authorization"].removeprefix("Bearer ")


def make_available(tenant, agent: SipAgent) -> None:
    tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
    time.sleep(0.05)  # scenario: distinct idle-since times: the first made available is the longest idle
