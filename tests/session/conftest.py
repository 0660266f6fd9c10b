"""A controller's call path end to end: real OutboundServer + CallSession against the
FreeSWITCH simulator, real PostgreSQL (records, outbox), Redis (limiter), a local webhook
server, and — for the bus test — a real RabbitMQ consumer."""
from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

import pytest
from sqlalchemy import text

from app.calls.limiter import ConcurrencyLimiter
from app.crypto import encrypt_secret, last4
from app.db.engine import tenant_session
from app.models import Application, PhoneNumber, SipTargetHost
from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer
from app.settings import get_settings
from app.voice.live_control import LiveControl
from app.voice.originator import Originator
from app.voice.services import CallServices
from app.voice.session import CallSession
from app.webhooks.client import WebhookClient
from esl.inbound import InboundConnection
from tests.plugins.database import unique_number


@pytest.fixture
def services(redis_client, redis_prefix) -> CallServices:
    return CallServices(
        limiter=ConcurrencyLimiter(redis_client, key_prefix=f"{redis_prefix}{uuid.uuid4().hex[:6]}:"),
        redis=redis_client,
        webhooks=WebhookClient(allow_loopback=True, retry_delays=(0.01, 0.01)),
        recordings_dir="/var/spool/fs/rec",
        ws_vendor="saas-sbc",
        hangup_complete_timeout=5.0,
    )


@pytest.fixture
def controller(outbound_server, services, media_dns):
    """An OutboundServer whose application is the production CallSession."""
    return outbound_server(lambda conn: CallSession(conn, services).run())


@pytest.fixture
def live_control(services, redis_client):
    """The controller's live-control listener (POST /api/calls/:callId/actions, agent transfers)
    on this test's sessions."""
    control = LiveControl(redis_client, get_settings().redis_key_prefix, services.controller_id,
                          services.live_sessions).start()
    assert control.subscribed.wait(5)
    yield control
    control.stop()


@pytest.fixture
def tenant(seed):
    """A tenant with an admin (the REST API's tests: live control, transfers)."""
    return seed.tenant()


@pytest.fixture
def admin(api, tenant):
    """The tenant's admin, logged in to the API."""
    return api.login(tenant)


@pytest.fixture
def number_with_app(make_account) -> Callable[..., tuple[Any, str, uuid.UUID]]:
    """``number_with_app(max_concurrent_calls=0, secret=None, sip_hosts=(), **application
    fields)`` → (account, number, application id). ``sip_hosts``: hosts the account's dial may
    reach with sip: targets (app.calls.sip_targets)."""

    def make(*, max_concurrent_calls: int = 0, secret: Optional[str] = None,
             sip_hosts: tuple[str, ...] = (), **fields: Any) -> tuple[Any, str, uuid.UUID]:
        account = make_account(max_concurrent_calls=max_concurrent_calls)
        number = unique_number()
        with tenant_session(account.id) as session:
            app = Application(account_id=account.id, name="test app", **fields)
            if secret:
                app.signing_secret_encrypted = encrypt_secret(secret)
                app.signing_secret_last4 = last4(secret)
            session.add(app)
            session.flush()
            session.add(PhoneNumber(account_id=account.id, number=number, application_id=app.id,
                                    answering_mode="webhook"))
            for host in sip_hosts:
                session.add(SipTargetHost(account_id=account.id, host=host))
        return account, number, app.id

    return make


def call_record(owner_conn, call_id: str) -> Optional[dict]:
    row = owner_conn.execute(text("SELECT * FROM call_records WHERE call_id = :c"),
                             {"c": call_id}).mappings().first()
    return dict(row) if row else None


def outbox_keys(owner_conn, trace_id) -> list[str]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT routing_key FROM event_outbox WHERE body->>'trace_id' = :t ORDER BY created_at"),
        {"t": str(trace_id)})]


def executed(call) -> list[tuple[str, str]]:
    """Applications run and ``uuid_answer`` (the session answers through the api), in order."""
    return call.actions()


def hangups(call) -> list[str]:
    return [c.headers.get("hangup-cause", "") for c in call.commands
            if c.name == "sendmsg" and c.headers.get("call-command") == "hangup"]


@pytest.fixture
def dialling(outbound_server, services, inbound_sim):
    """(originator, controller server): routing on, one node link to the simulated switch."""
    services.routing = RoutingCache()
    services.dialer = LcrDialer(services.routing)
    server = outbound_server(lambda conn: CallSession(conn, services).run())
    node = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    node.connect()
    originator = Originator(services, lambda: [node], lambda: server.address)
    yield originator, server
    node.close()
