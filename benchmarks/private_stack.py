"""A real-switch benchmark's own database, Redis prefix and RabbitMQ vhost, like a test run's.

``configure(name)`` must run before anything imports ``app`` (the settings are read once, and
the entry point monkey-patches gevent next); ``private_stack`` creates the database and vhost,
yields a scratch folder, and removes all three afterwards, whatever happened. ``on_real_switch``
is a real-switch bench's start-up: skipped (said) without ../shared/freeswitch, else the private
stack, a FreeSWITCH and the product started on it, the bench's body run, all stopped after.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional


def configure(name: str) -> str:
    """Point the process at resources of its own (``sbc_<run>``); returns the run id."""
    run = f"bench_{name}_{os.getpid()}"
    os.environ.setdefault("SBC_DATABASE_URL", f"postgresql://postgres@127.0.0.1:5432/sbc_{run}")
    os.environ.setdefault("SBC_REDIS_KEY_PREFIX", f"sbc:{run}:")
    os.environ.setdefault("SBC_AMQP_URL", f"amqp://guest:guest@127.0.0.1:5672/sbc_{run}")
    os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)
    return run


@contextmanager
def private_stack(run: str) -> Iterator[Path]:
    """The migrated database and the vhost exist inside; the scratch folder is yielded."""
    from app.db.engine import reset_engines
    from app.db.migrate import ensure_database, upgrade
    from tests.plugins.database import _maintenance
    from tests.plugins.services import amqp_vhost_name, create_vhost, delete_vhost

    ensure_database()
    upgrade()
    vhost = amqp_vhost_name()
    create_vhost(vhost)
    work = Path(tempfile.mkdtemp(prefix=f"sbc-{run}-"))
    try:
        yield work
    finally:
        delete_vhost(vhost)
        reset_engines()
        _maintenance(f'DROP DATABASE IF EXISTS "sbc_{run}" WITH (FORCE)')
        shutil.rmtree(work, ignore_errors=True)


def on_real_switch(run: str, body: Callable[[Path, Any, Any, Any], None], *,
                   also_missing: Optional[Callable[[], Optional[str]]] = None, switch_class: Any = None) -> None:
    """``body(work, switch, product, engine)`` with a started switch (``switch_class``, by default
    tests/realswitch's RealSwitch) and product, and an owner engine on the private database;
    prints ``skipped: …`` instead when the switch tree (or ``also_missing()``) says why not."""
    from sqlalchemy import create_engine, pool

    from app.db.urls import sqlalchemy_url
    from tests.realswitch.freeswitch import RealSwitch, SwitchPorts, freeswitch_tree, missing_reason
    from tests.realswitch.product import Product

    reason = missing_reason(freeswitch_tree()) or (also_missing() if also_missing else None)
    if reason:
        print(f"skipped: {reason}")
        return
    with private_stack(run) as work:
        switch = (switch_class or RealSwitch)(freeswitch_tree(), work / "fs", SwitchPorts.pick(), "bench-esl")
        switch.start()
        product = Product(switch, work)
        engine = create_engine(sqlalchemy_url(os.environ["SBC_DATABASE_URL"]), poolclass=pool.NullPool)
        try:
            product.start()
            body(work, switch, product, engine)
        finally:
            product.stop()
            switch.stop()
            engine.dispose()
