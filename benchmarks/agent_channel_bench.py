"""Agent channel on one ``sbc api`` process: figures, not pass/fail.

Starts ``sbc api`` (gevent pywsgi) against a throw-away database, Redis prefix and RabbitMQ
vhost, opens ``--agents`` sockets from this process (websocket-client on gevent), then:

- connect + auth: TCP connect, upgrade, auth message → ``connection`` (JWT check, identity
  and agent re-read from the database, Redis owner key, takeover announcement);
- ``setState`` → ``ack``: the command round trip (identity re-read, the state write with its
  outbox row, Redis idle set);
- ``setState`` → ``state`` push: the same change coming back over the bus (outbox → this
  process's publisher polling every 0.1 s or woken → RabbitMQ → the API's exclusive relay
  queue → the socket's writer), i.e. what any agent sees for any state change.
- live-call action → ESL (``--controls N``): an agent's ``dtmf`` command until a controller's
  ``call.control`` consumer sends the ``bgapi uuid_send_dtmf`` to its switch (the simulator's
  inbound port here), one at a time. The relay is a controller's (outbox poll 1 s), with and
  without its NOTIFY listener (``--no-notify``: the behaviour before the API's urgent wake).

Run: .venv/bin/python benchmarks/agent_channel_bench.py [--agents N] [--rounds R]
Figures taken while other work runs on the machine are noisy.
"""
from __future__ import annotations

from app.gevent_setup import patch

patch()

import argparse  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

import gevent  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(name: str, samples: list[float]) -> None:
    print(f"{name:<34} n={len(samples):<6} p50 {statistics.median(samples) * 1000:8.2f} ms   "
          f"p99 {percentile(samples, 99) * 1000:8.2f} ms   max {max(samples) * 1000:8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--controls", type=int, default=40)
    parser.add_argument("--no-notify", action="store_true",
                        help="the controller's relay does not LISTEN (polls the outbox every 1 s)")
    args = parser.parse_args()

    run = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    env = dict(os.environ)
    env["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{run}"
    env["SBC_REDIS_KEY_PREFIX"] = f"sbc:{run}:"
    env["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{run}"
    env.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)
    os.environ.update({k: env[k] for k in ("SBC_DATABASE_URL", "SBC_REDIS_KEY_PREFIX", "SBC_AMQP_URL",
                                           "SBC_JWT_SECRET")})

    import psycopg2
    from flask_jwt_extended import create_access_token
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from app.accounts.passwords import hash_password
    from app.accounts.service import create_tenant
    from app.api.app import create_app
    from app.db.engine import reset_engines
    from app.db.migrate import upgrade
    from app.events.publisher import start_publisher, stop_publisher
    from app.models import Account, Agent, User
    from tests.agent_channel.client import ChannelClient
    from tests.plugins.services import create_vhost, delete_vhost

    admin = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "sbc_{run}"')
    create_vhost(f"sbc_{run}")
    proc = None
    clients: list[ChannelClient] = []
    try:
        upgrade(env["SBC_DATABASE_URL"])
        subdomain = "bench" + uuid.uuid4().hex[:6]
        create_tenant(subdomain, "admin", "bench-password-123", ["api-access", "queue-mgmt"])
        reset_engines()
        owner = create_engine(env["SBC_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg2://", 1))
        users = []
        agent_ids = []
        with Session(owner) as db, db.begin():
            account_id = db.query(Account.id).filter(Account.subdomain == subdomain).scalar()
            for n in range(args.agents):
                user = User(id=uuid.uuid4(), account_id=account_id, username=f"agent{n}",
                            password_hash=hash_password("x" * 12, rounds=4), role="agent")
                db.add(user)
                db.flush()
                agent = Agent(id=uuid.uuid4(), account_id=account_id, user_id=user.id)
                db.add(agent)
                users.append(user.id)
                agent_ids.append(str(agent.id))
        owner.dispose()
        app = create_app()
        with app.app_context():
            tokens = [create_access_token(identity=str(u), additional_claims={
                "acct": str(account_id), "tenant": subdomain, "session": "agent", "role": "agent"})
                for u in users]
        start_publisher(poll_seconds=0.1)
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "api",
             "--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("sbc api did not start")
                time.sleep(0.1)
        host = f"{subdomain}.localhost"
        warm = ChannelClient(port, host)  # first socket starts the process's relay consumer
        warm.auth(tokens[0])
        warm.close()

        auth_times: list[float] = []

        def connect(token: str) -> None:
            started = time.perf_counter()
            client = ChannelClient(port, host, timeout=60)
            client.auth(token)
            auth_times.append(time.perf_counter() - started)
            client.expect("state", timeout=60)
            clients.append(client)

        print(f"# sbc api (gevent pywsgi, 1 process) on {os.cpu_count()} CPUs; {args.agents} agent sockets "
              f"driven from another process; load average before: {os.getloadavg()[0]:.2f}")
        gevent.joinall([gevent.spawn(connect, t) for t in tokens], raise_error=True)
        report("connect + auth → connection", auth_times)

        acks: list[float] = []
        pushes: list[float] = []

        def toggle(client: ChannelClient, state: str) -> None:
            started = time.perf_counter()
            ack = client.command("setState", state=state)
            acks.append(time.perf_counter() - started)
            assert ack["ok"], ack
            client.expect("state", lambda m, s=state: m["state"] == s, timeout=60)
            pushes.append(time.perf_counter() - started)

        for r in range(args.rounds):
            state = "available" if r % 2 == 0 else "not_ready"
            gevent.joinall([gevent.spawn(toggle, c, state) for c in clients], raise_error=True)
        report("setState → ack (all agents at once)", acks)
        report("setState → state push over the bus", pushes)
        if args.controls:
            agent = ChannelClient(port, host)  # the first agent's own socket
            agent.auth(tokens[0])
            clients.append(agent)
            control_latency(args, agent, str(account_id), agent_ids[0])
    finally:
        for client in clients:
            client.close()
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        stop_publisher()
        reset_engines()
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "sbc_{run}" WITH (FORCE)')
        admin.close()
        delete_vhost(f"sbc_{run}")
        import redis

        r = redis.Redis()
        keys = list(r.scan_iter(f"sbc:{run}:*"))
        if keys:
            r.delete(*keys)


def control_latency(args, client, account_id: str, agent_id: str) -> None:
    """The agent's ``dtmf`` → the controller's ``bgapi uuid_send_dtmf`` (a controller's relay,
    its call.control consumer and one inbound ESL node: the simulator's)."""
    import random

    import redis

    from app.contact.presence import Presence
    from app.events.consumer import RecentIds
    from app.events.publisher import start_publisher, stop_publisher
    from app.settings import get_settings
    from app.voice.call_control import CallControl, start_call_control_consumer
    from esl.inbound import InboundConnection
    from tests.simulator.inbound import InboundServer

    stop_publisher()  # the bench's fast relay; now a controller's
    start_publisher(poll_seconds=1.0, **({"listen_dsn": ""} if args.no_notify else {}))
    sim = InboundServer()
    sim.start()
    node = InboundConnection(*sim.address, "ClueCon", reconnect=False)
    node.connect()
    seen: dict[str, float] = {}
    send = node.bgapi

    def bgapi(command, *a, **kw):
        seen[command.split()[1]] = time.perf_counter()  # uuid_send_dtmf <call id> <digits>
        return send(command, *a, **kw)

    node.bgapi = bgapi
    consumer = start_call_control_consumer(CallControl(lambda: [node]), RecentIds())
    consumer.ready.wait(10)
    presence = Presence(redis.Redis.from_url(get_settings().redis_url), get_settings().redis_key_prefix)
    samples: list[float] = []
    try:
        for _ in range(args.controls):
            call_id, leg_id = str(uuid.uuid4()), str(uuid.uuid4())
            presence.redis.set(presence.engaged_prefix(account_id) + agent_id, call_id, ex=60)
            presence.set_agent_leg(account_id, agent_id, call_id, leg_id)
            gevent.sleep(random.uniform(0.05, 0.3))  # not in step with the relay's poll
            started = time.perf_counter()
            ack = client.command("dtmf", digits="1")
            assert ack["ok"], ack
            deadline = time.monotonic() + 10
            while call_id not in seen and time.monotonic() < deadline:
                gevent.sleep(0.002)
            samples.append(seen[call_id] - started)
        print(f"# controller relay: outbox poll 1 s, NOTIFY listener {'off' if args.no_notify else 'on'}")
        report("dtmf → controller's ESL command", samples)
    finally:
        consumer.stop()
        node.close()
        sim.stop()


if __name__ == "__main__":
    main()
