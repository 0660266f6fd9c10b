"""The stack the agent SDK's node tests run against (sdk/agent-js/test/): the real ``sbc api``,
``sbc controller`` and ``sbc workers`` processes on a private PostgreSQL database, Redis prefix
and RabbitMQ vhost, with the FreeSWITCH simulator (tests/simulator) as the switch.

    .venv/bin/python -m tests.sdk.harness [--token-lifetime SECONDS]

prints one JSON line ``{"control": "http://127.0.0.1:<port>", "apiPort": <port>}`` and serves a
small control API for the tests until its standard input closes (the node test runner holding
the pipe exits → everything here is stopped and the database, vhost and keys are removed):

- ``POST /tenant`` ``{"agents": 2, "offerTimeoutSeconds": 4, "wrapUpSeconds": 1}`` → a tenant
  provisioned through the REST API: admin, queue, agent users with SIP credentials, a number
  answered by ``[{"verb": "queue", ...}]``; each agent is marked registered in Redis as
  ``sofia::register`` would (the simulator has no SIP registrar).
- ``POST /call`` ``{"number"}`` → a simulated caller on that number; the agent's leg is a
  ``RingingPhone`` (tests/simulator/scenario.py) that rings until the test answers it —
  what the SDK's WebRTC leg does in a browser — or declines it, or it times out.
- ``POST /phone`` ``{"callId", "action": "answer" | "decline" | "hangup"}``;
  ``POST /caller`` ``{"callId", "action": "hangup"}``.
- ``POST /api/restart`` → the API process is stopped and started again on the same port.
- ``POST /events`` ``{"accountId", "prefix"}`` → outbox routing keys of the account (oldest first).
- ``POST /supervision`` ``{"accountId", "agentId", "callId", "mode", "active"}`` →
  ``call.control.start`` (active) or ``.stop`` as the controller emits when a supervisor's
  eavesdrop starts or ends (the simulator has no eavesdrop; the relay and the SDK are real).
- ``POST /licenses`` ``{"accountId", "licenses"}`` → the account's licenses replaced (as
  ``sbc tenant update`` does).
- ``POST /totp/enrol`` ``{"subdomain", "username", "password"}`` → ``{"secret", "recoveryCodes"}``:
  the user enrols an authenticator through the REST API (``/auth/mfa/totp`` then ``/confirm``,
  with the code of the current step, which is then used up).
- ``POST /sso/configure`` ``{"subdomain", "host", "redirectPath", "userId", "subject"}`` → the
  tenant's single sign-on at a real OpenID provider (oidc-provider, tests/sso/provider, started
  on first use), the client's redirect URI ``http://<host><redirectPath>``, and the user linked
  to the provider's person ``subject``.
- ``POST /sso/sign-in`` ``{"authorizationUrl", "login"}`` → the provider's redirect query
  (``code``, ``state``, ``iss``) once ``login`` signed in at its pages.
- ``POST /campaign`` ``{"subdomain", "mode", "contacts": [{"phone_number", "name"?, "attributes"?}]}``
  → ``{"campaignId"}``: a campaign of the tenant's queue and number, dialling through a trunk,
  its calling window the whole day in UTC, created and started through the REST API; the real
  ``sbc workers`` dialer paces it (preview offers reach the SDK within a second or two).
- ``POST /totp/code`` ``{"secret", "steps"}`` → ``{"code"}``: what the authenticator app shows
  ``steps`` 30-second steps from now (pyotp, as the user's phone computes it).
"""
from __future__ import annotations

from app.gevent_setup import patch

patch()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUN_ID = f"sdk{os.getpid()}_{uuid.uuid4().hex[:6]}"
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN_ID}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN_ID}:"
os.environ["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN_ID}"
os.environ["SBC_JWT_SECRET"] = "sdk-test-secret-" + uuid.uuid4().hex
os.environ["SBC_BASE_DOMAIN"] = "localhost"
os.environ["SBC_ALLOW_LOOPBACK_SSO"] = "1"  # the OpenID provider of /sso/configure is on 127.0.0.1

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import requests  # noqa: E402
from gevent.pywsgi import WSGIServer  # noqa: E402

from tests.plugins.eventually import NotYet, eventually  # noqa: E402

PASSWORD = "sdk-agent-password-1"
ADMIN_PASSWORD = "sdk-admin-password-1"
LICENSES = ["api-access", "queue-mgmt", "programmable-voice"]
START_TIMEOUT = 60.0
REGISTRATION_TTL = 3600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.3).close()
        return True
    except OSError:
        return False


def wait_port(port: int, timeout: float = START_TIMEOUT) -> bool:
    """True once something listens on ``port``; False after ``timeout`` (the caller reports
    which process never came up, with its log)."""
    try:
        return eventually(lambda: listening(port), timeout=timeout, interval=0.1,
                          what=f"127.0.0.1:{port} listening")
    except NotYet:
        return False


class Process:
    """One ``sbc <args>`` child, its output appended to ``<workdir>/<name>.log``."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], workdir: Path) -> None:
        self.name, self.args, self.env = name, args, env
        self.log = workdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", *self.args], cwd=ROOT,
                                         env=self.env, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Stack:
    def __init__(self, workdir: Path, token_lifetime: int | None) -> None:
        self.workdir = workdir
        self.api_port = free_port()
        self.controller_port = free_port()
        self.sim = None
        self.oidc: Any = None
        self.calls: dict[str, Any] = {}
        self.phones: dict[str, Any] = {}
        env = dict(os.environ, PYTHONUNBUFFERED="1", SBC_FS_GENERATED_DIR=str(workdir / "generated"),
                   SBC_LOG_LEVEL=os.environ.get("SBC_LOG_LEVEL", "INFO"))
        api_env = dict(env)
        if token_lifetime:
            api_env["SBC_TOKEN_LIFETIME_SECONDS"] = str(token_lifetime)
        self.api = Process("api", ["api", "--host", "127.0.0.1", "--port", str(self.api_port),
                                   "--no-access-log"], api_env, workdir)
        self.controller = Process("controller", ["controller"], env, workdir)
        self.workers = Process("workers", ["workers"], env, workdir)

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> None:
        from app.config import set_value
        from app.db.migrate import upgrade
        from app.settings import get_settings
        from tests.plugins.services import create_vhost
        from tests.simulator.inbound import InboundServer

        (self.workdir / "generated").mkdir(exist_ok=True)
        url = get_settings().database_url
        _maintenance(f'DROP DATABASE IF EXISTS "sbc_{RUN_ID}" WITH (FORCE)')
        _maintenance(f'CREATE DATABASE "sbc_{RUN_ID}"')
        upgrade(url)
        create_vhost(f"sbc_{RUN_ID}")
        self.sim = InboundServer(password="ClueCon")
        self.sim.start()
        host, port = self.sim.address
        set_value("freeswitch.nodes", [{"host": host, "port": port, "password": "ClueCon"}], announce=False)
        set_value("controller.listen", {"host": "127.0.0.1", "port": self.controller_port}, announce=False)
        set_value("health.controller_port", free_port(), announce=False)
        set_value("health.workers_port", free_port(), announce=False)
        for proc in (self.api, self.controller, self.workers):
            proc.start()
        if not wait_port(self.api_port):
            raise RuntimeError(f"sbc api never listened\n{self.api.tail()}")
        if not wait_port(self.controller_port):
            raise RuntimeError(f"sbc controller never listened\n{self.controller.tail()}")

    def stop(self) -> None:
        from app.settings import get_settings
        from tests.plugins.services import delete_prefixed_keys, delete_vhost

        for proc in (self.api, self.controller, self.workers):
            proc.stop()
        for call in self.calls.values():
            call.kill()
        if self.sim is not None:
            self.sim.stop()
        if self.oidc is not None:
            self.oidc.stop()
        from app.db.engine import reset_engines

        reset_engines()
        _maintenance(f'DROP DATABASE IF EXISTS "sbc_{RUN_ID}" WITH (FORCE)')
        delete_vhost(f"sbc_{RUN_ID}")
        import redis

        client = redis.Redis.from_url(get_settings().redis_url)
        delete_prefixed_keys(client, get_settings().redis_key_prefix)
        client.close()

    def restart_api(self) -> dict[str, Any]:
        self.api.stop()
        time.sleep(0.2)  # scenario: the API stays down a moment (the SDK's reconnect is under test)
        self.api.start()
        if not wait_port(self.api_port):
            raise RuntimeError(f"sbc api never listened again\n{self.api.tail()}")
        return {"ok": True}

    # -- provisioning through the REST API ------------------------------------------------------
    def admin(self, subdomain: str, username: str = "admin", password: str = ADMIN_PASSWORD) -> "Rest":
        return Rest(self.api_port, subdomain).login(username, password)

    def tenant(self, body: dict[str, Any]) -> dict[str, Any]:
        import redis

        from app.accounts.service import create_tenant
        from app.contact.presence import Presence
        from app.settings import get_settings
        from tests.simulator.channel import CORE_UUID

        subdomain = f"sdk-{uuid.uuid4().hex[:10]}"
        licenses = body.get("licenses", LICENSES)
        account = create_tenant(subdomain, "admin", ADMIN_PASSWORD, licenses, bcrypt_rounds=4)
        if "queue-mgmt" not in licenses:
            return {"subdomain": subdomain, "accountId": str(account.id),
                    "host": f"{subdomain}.localhost:{self.api_port}",
                    "admin": {"username": "admin", "password": ADMIN_PASSWORD}, "agents": []}
        admin = self.admin(subdomain)
        queue = admin.post("/api/queues", {
            "name": f"support-{uuid.uuid4().hex[:6]}", "announce_position": False,
            "offer_timeout_seconds": int(body.get("offerTimeoutSeconds", 4)),
            "wrap_up_seconds": int(body.get("wrapUpSeconds", 1)),
            "max_missed_offers": int(body.get("maxMissedOffers", 3))})
        presence = Presence(redis.Redis.from_url(get_settings().redis_url), get_settings().redis_key_prefix)
        agents = []
        for n in range(int(body.get("agents", 1))):
            username = f"agent{n}"
            user = admin.post("/api/users", {"username": username, "password": PASSWORD, "role": "agent"})
            agent = admin.post("/api/agents", {"user_id": user["id"], "queue_ids": [queue["id"]]})
            sip = admin.post(f"/api/agents/{agent['id']}/sip-credentials", None)
            # what sofia::register does for a phone registered on this (simulated) switch
            presence.registered(subdomain, sip["sip_username"], REGISTRATION_TTL, node=CORE_UUID)
            agents.append({"username": username, "password": PASSWORD, "agentId": agent["id"],
                           "userId": user["id"], "sip": sip})
        app = admin.post("/api/applications", {"name": "queue", "app_json": [
            {"verb": "queue", "name": queue["name"]}]})
        number = "1555" + str(uuid.uuid4().int)[:8]
        admin.post("/api/phone-numbers", {"number": number, "application_id": app["id"]})
        return {"subdomain": subdomain, "accountId": str(account.id),
                "host": f"{subdomain}.localhost:{self.api_port}",
                "admin": {"username": "admin", "password": ADMIN_PASSWORD},
                "queue": queue, "number": number, "agents": agents}

    # -- calls ----------------------------------------------------------------------------------
    def call(self, body: dict[str, Any]) -> dict[str, Any]:
        from tests.simulator import Call, RingingPhone, place_call

        phones = [RingingPhone() for _ in range(int(body.get("offers", 3)))]
        scenario = Call(callee=body["number"])
        for phone in phones:
            scenario.bridge_rings(phone)
        consulted = [RingingPhone() for _ in range(int(body.get("consults", 0)))]
        for phone in consulted:  # the phones an attended transfer's consultations ring, in order
            scenario.consult_rings(phone)
        phones += consulted
        if body.get("hangupAfter"):
            scenario.hangup_after(float(body["hangupAfter"]))
        call = place_call(scenario, ("127.0.0.1", self.controller_port))
        self.calls[call.uuid] = call
        self.phones[call.uuid] = phones
        return {"callId": call.uuid}

    def _ringing_phone(self, call_id: str, timeout: float = 10.0):
        def ringing():
            return next((phone for phone in self.phones.get(call_id, [])
                         if phone.ringing.is_set() and not phone.decided.is_set()), None)

        try:
            return eventually(ringing, timeout=timeout, interval=0.02, what=f"a phone rings for call {call_id}")
        except NotYet:
            raise LookupError(f"no phone rings for call {call_id}") from None

    def phone(self, body: dict[str, Any]) -> dict[str, Any]:
        call_id, action = body["callId"], body["action"]
        if action == "hangup":
            answered = [p for p in self.phones.get(call_id, []) if p.decided.is_set() and p.cause is None]
            for phone in answered:
                phone.hangup()
            return {"ok": bool(answered)}
        phone = self._ringing_phone(call_id)
        actions: dict[str, Callable[[], None]] = {"answer": phone.answer, "decline": phone.decline}
        actions[action]()
        return {"ok": True, "bLeg": phone.b_leg_uuid}

    def supervision(self, body: dict[str, Any]) -> dict[str, Any]:
        from app.events.payloads import call_control, emit

        key = "call.control.start" if body.get("active", True) else "call.control.stop"
        supervisor = str(uuid.uuid4())
        emit(key, call_control(body["callId"], supervision_id=str(uuid.uuid4()), supervisor_id=supervisor,
                               agent_id=body["agentId"], mode=body["mode"]), account_id=body["accountId"])
        return {"ok": True, "key": key, "supervisorId": supervisor}

    def licenses(self, body: dict[str, Any]) -> dict[str, Any]:
        from sqlalchemy import create_engine, text

        from app.db.urls import sqlalchemy_url
        from app.settings import get_settings

        engine = create_engine(sqlalchemy_url(get_settings().database_url))
        try:
            with engine.begin() as conn:
                conn.execute(text("UPDATE accounts SET licenses = :l WHERE id = :a"),
                             {"l": list(body["licenses"]), "a": body["accountId"]})
        finally:
            engine.dispose()
        return {"ok": True}

    def totp_enrol(self, body: dict[str, Any]) -> dict[str, Any]:
        user = Rest(self.api_port, body["subdomain"]).login(body["username"], body["password"])
        secret = user.post("/auth/mfa/totp", {})["secret"]
        confirmed = user.post("/auth/mfa/totp/confirm", {"code": totp_code(secret, 0)})
        return {"secret": secret, "recoveryCodes": confirmed["recovery_codes"]}

    def sso_configure(self, body: dict[str, Any]) -> dict[str, Any]:
        from tests.sso.provider import OidcProviders

        if self.oidc is None:
            self.oidc = OidcProviders(count=1)
        issuer = self.oidc.issuers[0]
        client_id, secret = self.oidc.register_client(issuer, [f"http://{body['host']}{body['redirectPath']}"])
        admin = self.admin(body["subdomain"])
        admin.put("/api/account/sso", {
            "issuer": issuer, "client_id": client_id, "client_secret": secret, "display_name": "Example IdP",
            "role_mapping": [], "default_role": "agent", "create_users": False, "enabled": True})
        admin.put(f"/api/users/{body['userId']}/sso", {"subject": body["subject"]})
        return {"issuer": issuer}

    def campaign(self, body: dict[str, Any]) -> dict[str, Any]:
        admin = self.admin(body["subdomain"])
        queue = admin.post("/api/queues", {"name": f"outbound-{uuid.uuid4().hex[:6]}"}) if "queueId" not in body \
            else {"id": body["queueId"]}
        carrier = admin.post("/api/carriers", {"name": f"trunk-{uuid.uuid4().hex[:6]}"})
        campaign = admin.post("/api/campaigns", {
            "name": "sdk", "dialer_mode": body.get("mode", "preview"), "caller_id": body["callerId"],
            "carrier_id": carrier["id"], "agent_group_ids": [body.get("queueId", queue["id"])],
            "window_start": "00:00", "window_end": "23:59"})
        contacts = [{"time_zone": "Etc/UTC", **c} for c in body.get("contacts", [])]
        admin.post(f"/api/campaigns/{campaign['id']}/contacts", {"contacts": contacts})
        admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        return {"campaignId": campaign["id"]}

    def events(self, body: dict[str, Any]) -> dict[str, Any]:
        from sqlalchemy import create_engine, text

        from app.db.urls import sqlalchemy_url
        from app.settings import get_settings

        engine = create_engine(sqlalchemy_url(get_settings().database_url))
        try:
            with engine.connect() as conn:
                rows = conn.execute(text(
                    "SELECT routing_key, body FROM event_outbox WHERE routing_key LIKE :k "
                    "AND body->>'account' = :a ORDER BY created_at, id"),
                    {"k": body.get("prefix", "") + "%", "a": body["accountId"]}).all()
        finally:
            engine.dispose()
        return {"events": [{"key": r[0], "payload": r[1].get("payload")} for r in rows]}


class Rest:
    """An admin of one tenant talking HTTP to the API process (the Host picks the tenant)."""

    def __init__(self, port: int, subdomain: str) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.http = requests.Session()
        self.http.headers["Host"] = f"{subdomain}.localhost"

    def login(self, username: str, password: str) -> "Rest":
        body = self.post("/auth/login", {"username": username, "password": password})
        self.http.headers["Authorization"] = f"Bearer {body['token']}"
        return self

    def post(self, path: str, body: Any) -> Any:
        return self._send("POST", path, body)

    def put(self, path: str, body: Any) -> Any:
        return self._send("PUT", path, body)

    def _send(self, method: str, path: str, body: Any) -> Any:
        response = self.http.request(method, self.base + path, json=body, timeout=15)
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{method} {path} -> {response.status_code}: {response.text[:300]}")
        return response.json()


def totp_code(secret: str, steps: int) -> str:
    """The code an authenticator app shows ``steps`` steps from now (RFC 6238 defaults)."""
    import pyotp

    return pyotp.TOTP(secret).at(time.time(), counter_offset=steps)


def _maintenance(sql: str) -> None:
    import psycopg2

    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def control_app(stack: Stack) -> Callable:
    routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "/tenant": stack.tenant, "/call": stack.call, "/phone": stack.phone,
        "/api/restart": lambda _body: stack.restart_api(), "/events": stack.events,
        "/caller": lambda body: {"ok": _caller(stack, body)}, "/licenses": stack.licenses,
        "/supervision": stack.supervision, "/totp/enrol": stack.totp_enrol, "/campaign": stack.campaign,
        "/sso/configure": stack.sso_configure, "/sso/sign-in": _sso_sign_in,
        "/totp/code": lambda body: {"code": totp_code(body["secret"], int(body.get("steps", 0)))},
    }

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        route = routes.get(environ.get("PATH_INFO", ""))
        if route is None or environ["REQUEST_METHOD"] != "POST":
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"error": "no such route"}']
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length) or b"{}")
        try:
            result, status = route(body), "200 OK"
        except Exception as exc:  # the test reads the reason
            result, status = {"error": f"{type(exc).__name__}: {exc}"}, "500 Internal Server Error"
        start_response(status, [("Content-Type", "application/json")])
        return [json.dumps(result, default=str).encode()]

    return app


def _sso_sign_in(body: dict[str, Any]) -> dict[str, Any]:
    from tests.sso.provider import sign_in_at_provider

    return sign_in_at_provider(body["authorizationUrl"], body["login"])


def _caller(stack: Stack, body: dict[str, Any]) -> bool:
    call = stack.calls.get(body["callId"])
    if call is None:
        return False
    call._spawn_hangup("NORMAL_CLEARING", "recv_bye")  # what a scheduled hangup step does
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-lifetime", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sbc-sdk-") as tmp:
        workdir = Path(os.environ.get("SBC_SDK_HARNESS_DIR") or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        stack = Stack(workdir, args.token_lifetime)
        try:
            stack.start()
            control_port = free_port()
            server = WSGIServer(("127.0.0.1", control_port), control_app(stack), log=None)
            server.start()
            print(json.dumps({"control": f"http://127.0.0.1:{control_port}", "apiPort": stack.api_port,
                              "logs": str(workdir)}), flush=True)
            # until the test runner closes our stdin (or dies): read in a thread, gevent waits
            done = gevent.event.Event()
            gevent.get_hub().threadpool.spawn(sys.stdin.read).rawlink(lambda _: done.set())
            done.wait()
            server.stop(timeout=1)
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
