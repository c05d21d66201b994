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
    path = os.environ.get("RENATURE_CHROMIUM") or shutil.which("chromium")
    if path is None:
        unavailable("chromium is not installed (apt-get install chromium)")
        raise AssertionError("unreachable")  # unavailable() always raises
    return path


def node_path() -> str:
    """Node.js 20 or later (or ``RENATURE_NODE``), for the JavaScript client's tests."""
    path = os.environ.get("RENATURE_NODE") or shutil.which("node")
    if path is None:
        unavailable("node is not installed (apt-get install nodejs; version 20 or later)")
        raise AssertionError("unreachable")  # unavailable() always raises
    return path
