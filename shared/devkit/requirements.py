"""What a test needs from the machine, said once: a missing ``redis-server``, ``chromium`` or
``nginx`` skips the test loudly on a developer's machine and fails it where the environment
says it is mandatory (``RENATURE_REQUIRE_REDIS=1``, set by ``.ci/run``), so CI never counts a
test that did not run."""

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


def nginx_path() -> str:
    """Debian's nginx (or ``RENATURE_NGINX``), for the front-door test; the Makefile's ``proxy``
    target installs it for ``make test``. It lives in /usr/sbin, often not on a user's PATH."""
    return _program("nginx", "RENATURE_NGINX", "apt-get install nginx")


def _program(name: str, variable: str, install: str) -> str:
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
    path = os.environ.get(variable) or shutil.which(name, path=search)
    if path is None:
        unavailable(f"{name} is not installed ({install})")
        raise AssertionError("unreachable")  # unavailable() always raises
    return path
