"""What a test needs from the machine, said once: a missing ``redis-server`` or ``chromium``
skips the test loudly on a developer's machine and fails it where the environment says it is
mandatory (``RENATURE_REQUIRE_REDIS=1``, set by ``.ci/run``), so CI never counts a test that
did not run."""

from __future__ import annotations

import os
import shutil

import pytest

from devkit.redis_server import find_redis_server


def unavailable(reason: str) -> None:
    """Stop the test: a failure in CI, a skip (with ``reason``) elsewhere."""
    if os.environ.get("RENATURE_REQUIRE_REDIS") == "1":
        pytest.fail(f"{reason} (mandatory here)", pytrace=False)
    pytest.skip(reason)


def require_redis_server() -> None:
    if not find_redis_server():
        unavailable("redis-server is not on PATH (apt-get install redis-server)")


def chromium_path() -> str:
    """Debian's chromium (or ``RENATURE_CHROMIUM``); the Makefile installs it for ``make test``."""
    return _program("chromium", "RENATURE_CHROMIUM", "apt-get install chromium")


def node_path() -> str:
    """Node.js 20 or later (or ``RENATURE_NODE``), for the JavaScript client's tests."""
    return _program("node", "RENATURE_NODE", "apt-get install nodejs; version 20 or later")


def _program(name: str, variable: str, install: str) -> str:
    path = os.environ.get(variable) or shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed ({install})")
        raise AssertionError("unreachable")  # unavailable() always raises
    return path
