"""Garbage collection for the long-running gevent processes (controller, API).

Why: each full pass of the cycle collector scans every tracked object, and a process's
start-up heap (imported modules, SQLAlchemy's tables and compiled statements, settings) is
about 110,000 objects that live as long as the process. A full pass over them took 60-80 ms on
the 2-core test machine, and during it the event loop, and with it every call on the
controller, stands still. Freezing that heap once start-up is done moves it to the permanent
generation, which collections skip; what the process allocates afterwards is collected as
before.
"""
from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def freeze_startup_heap() -> int:
    """Collect start-up garbage, then freeze what is left; returns how many objects froze."""
    gc.collect()  # nothing collectable may end up in the permanent generation
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("start-up heap frozen: %d objects left out of garbage collection", frozen)
    return frozen
