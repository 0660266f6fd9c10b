"""Skipping for a missing service or tool, except under ``CI=true``, where it is a failure.

A skip is honest on a developer's machine that lacks, say, rabbitmqctl or the reference
FreeSWITCH build; in CI the same skip would let the suite pass without ever running the test.
The real-switch suite (tests/realswitch/conftest.py) and the agent SDK test do the same.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def skip_or_fail_in_ci(reason: str) -> NoReturn:
    """Skip with ``reason``; under CI=true fail with it instead."""
    if in_ci():
        pytest.fail(f"CI=true and this test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


def require(available: bool, reason: str) -> None:
    """``skip_or_fail_in_ci(reason)`` unless ``available``."""
    if not available:
        skip_or_fail_in_ci(reason)


def import_or_skip(module: str, reason: str) -> ModuleType:
    """``pytest.importorskip`` that fails under CI=true."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip_or_fail_in_ci(reason)
