"""The long-running processes leave their start-up heap out of garbage collection."""
from __future__ import annotations

import gc

from app.gc_tuning import freeze_startup_heap


def test_given_a_started_process_when_the_heap_is_frozen_then_full_collections_skip_it():
    try:
        frozen = freeze_startup_heap()
        assert frozen == gc.get_freeze_count() > 10_000  # the imported modules at least
        tracked_after = len(gc.get_objects())
        assert tracked_after < frozen, "a full collection no longer scans the start-up heap"
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
