"""Running verbs on a simulated call: H3's real OutboundConnection against the FreeSWITCH
simulator, a real Redis, the real PostgreSQL outbox and a local HTTP server for hooks."""
from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

import gevent
import gevent.event
import pytest
from sqlalchemy import text

from app.verbs import parse_verb_list, run_verbs
from app.voice.channel import ChannelVerbContext, HookTarget
from app.webhooks.client import WebhookClient
from esl.outbound import OutboundConnection
from tests.plugins.eventually import NotYet, eventually
from tests.verbs.queue_centre import Centre, make_centre

RECORDINGS_DIR = "/var/spool/fs/rec"


@dataclass
class AppDefaults:
    language: Optional[str] = "en-US"
    voice: Optional[str] = None


@dataclass
class VerbRun:
    outcome: Any = None
    error: Optional[BaseException] = None
    ctx: Optional[ChannelVerbContext] = None
    call: Any = None
    account_id: str = ""
    trace_id: str = ""
    extra: dict = field(default_factory=dict)

    def apps(self) -> list[tuple[str, str]]:
        """(application, argument) of every sendmsg execute the simulator received, and
        ``("uuid_answer", "")`` for each answer, in order."""
        return self.call.actions()

    def bridges(self) -> list[str]:
        """The dial strings of every ``bridge`` the call executed, in order."""
        return [arg for app, arg in self.apps() if app == "bridge"]

    def apis(self) -> list[str]:
        """api commands other than ``uuid_answer`` (apps() lists that one)."""
        return [c.line[len("api "):] for c in self.call.commands
                if c.name == "api" and not c.line.startswith("api uuid_answer")]

    def setvars(self) -> list[tuple[str, str]]:
        out = []
        for cmd in self.apis():
            parts = cmd.split(" ", 3)
            if parts[0] == "uuid_setvar":
                out.append((parts[2], parts[3] if len(parts) > 3 else ""))
        return out

    def events(self, owner_conn, expect: int = 1, timeout: float = 3.0) -> list[tuple[str, dict]]:
        """Outbox rows of this call. Event handlers (RECORD_STOP) may still be finishing after
        the socket closed, so wait up to ``timeout`` for at least ``expect`` rows."""
        def rows() -> list[tuple[str, dict]]:
            return [(r[0], r[1]) for r in owner_conn.execute(text(
                "SELECT routing_key, body FROM event_outbox WHERE body->>'trace_id' = :t ORDER BY created_at"),
                {"t": self.trace_id}).all()]

        def enough() -> list[tuple[str, dict]] | None:
            found = rows()
            return found if len(found) >= expect else None

        if expect > 0:
            with contextlib.suppress(NotYet):  # fewer rows: returned as they are, for the test's assert
                return eventually(enough, timeout=timeout, what=f"{expect} outbox row(s) of the call")
        return rows()


@pytest.fixture
def run_on_call(outbound_server, simulate_call, redis_client, hook_server, media_dns):
    """``run_on_call(scenario, verbs_json_or_callable, **ctx_kw) -> VerbRun``.

    The controller side answers, runs the verbs with run_verbs (or the callable with the
    context), hangs up if the caller is still there, waits for CHANNEL_HANGUP_COMPLETE, exits.
    """
    client = WebhookClient(allow_loopback=True, retry_delays=(0.01, 0.01))

    def run(scenario, verbs, *, timeout: float = 15.0, application=None, account_id: Optional[str] = None,
            **ctx_kw) -> VerbRun:
        result = VerbRun(account_id=account_id or str(uuid.uuid4()), trace_id=str(uuid.uuid4()))
        finished = gevent.event.Event()

        def app(conn: OutboundConnection) -> None:
            try:
                conn.connect()
                conn.myevents()
                conn.linger()
                conn.answer()
                hooks = HookTarget(client=client, base_body={
                    "callId": conn.uuid, "traceId": result.trace_id, "accountSid": result.account_id,
                    "from": "15551230000", "to": "15557650000", "direction": "inbound"})
                ctx = ChannelVerbContext(
                    conn, trace_id=result.trace_id, account_id=result.account_id,
                    application=application or AppDefaults(), from_number="15551230000",
                    to_number="15557650000", redis=redis_client, recordings_dir=RECORDINGS_DIR,
                    hooks=hooks, **ctx_kw)
                result.ctx = ctx
                try:
                    if callable(verbs):
                        result.outcome = verbs(ctx)
                    else:
                        result.outcome = run_verbs(ctx, parse_verb_list(verbs))
                except BaseException as exc:  # recorded for the test to assert on
                    result.error = exc
                if not conn.hung_up:
                    conn.hangup("NORMAL_CLEARING")
                conn.wait_hangup_complete(timeout=5)
                gevent.sleep(0.05)  # let the lingering events (RECORD_STOP) reach handlers
                conn.exit()
            except BaseException as exc:
                result.extra["harness_error"] = exc
            finally:
                finished.set()

        server = outbound_server(app)
        result.call = simulate_call(scenario, server)
        assert finished.wait(timeout), "verbs did not finish"
        result.call.wait(timeout)
        assert "harness_error" not in result.extra, result.extra.get("harness_error")
        return result

    yield run
    client.close()


@pytest.fixture
def centre(seed, owner_engine, redis_client) -> Centre:
    """A tenant with queue ``support`` (offer 5 s, 2 misses, wrap-up 1 s) and two available,
    registered agents: agent 0 idle longer than agent 1."""
    return make_centre(seed, owner_engine, redis_client)
