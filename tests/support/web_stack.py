"""``renature serve all`` (what ``make run`` starts) on a private Redis, for tests that talk to
the whole stack through its public address: the JavaScript client's, in Node and in Chromium."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx

from devkit.redis_server import RedisServer, free_port
from devkit.requirements import require_redis_server

STARTUP_TIMEOUT = 90.0
"""A deadline, not a wait: the stack is ready in seconds alone, in over 40 s on a loaded machine."""


class Stack(NamedTuple):
    url: str
    """The gateway's base URL."""
    redis_url: str
    """The Redis under it, to read a game's stored events as ``renature export`` does."""
    redis: RedisServer
    """That Redis's process, for a test that crashes it."""


@contextlib.contextmanager
def serve_all(**env: str) -> Iterator[Stack]:
    """The stack, with ``env`` added to its environment (limits, for instance)."""
    require_redis_server()
    log_path = Path(tempfile.mkdtemp(prefix="renature-stack-")) / "stack.log"
    with RedisServer() as server, log_path.open("wb") as log:
        port = free_port()
        environment = {
            **os.environ,
            "REDIS_URL": server.url,
            "RENATURE_ALLOW_CHOSEN_SEEDS": "0",
            **env,
        }
        environment.pop("RENATURE_CONSUMER", None)
        command = [sys.executable, "-c", "from gameserver.cli import main; main()", "serve", "all"]
        process = subprocess.Popen(
            [*command, "--port", str(port)], env=environment, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not _ready(url, process, log_path):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no stack within {STARTUP_TIMEOUT} s\n{_tail(log_path)}")
                time.sleep(0.3)  # polling a condition, with the deadline above
            yield Stack(url, server.url, server)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def _ready(url: str, process: subprocess.Popen[bytes], log: Path) -> bool:
    """Ready once the catalog answers and a game can be created (gateway and rules service)."""
    if process.poll() is not None:
        raise RuntimeError(f"the stack exited\n{_tail(log)}")
    try:
        return httpx.post(f"{url}/games", json={"players": 2}, timeout=5).status_code == 201
    except httpx.HTTPError:
        return False


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]
