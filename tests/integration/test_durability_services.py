"""Services heal themselves: real processes, a real Redis stopped and started.

- Started before Redis, the rules service and a projector wait for it (no exit) and work once
  it answers.
- Redis comes back *empty* (its data lost): the rules service and the projector create their
  consumer groups again (NOGROUP) instead of exiting (status 0) or logging NOGROUP forever, and
  commands are answered again within a few seconds of Redis returning.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from devkit.redis_server import RedisServer, free_port
from devkit.requirements import require_redis_server
from eventstore import KeyLayout
from gameserver.runtime import bus
from gameserver.runtime.rules_client import RulesClient
from renature import commands as c

pytestmark = [pytest.mark.redis, pytest.mark.e2e]

LAYOUT = KeyLayout()


@pytest.fixture
def port() -> int:
    require_redis_server()
    return free_port()


@pytest.fixture
def services(port: int, tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    with running(port, tmp_path, ["rules", "board"]) as procs:
        yield procs


@contextlib.contextmanager
def running(
    port: int, tmp_path: Path, names: list[str], gateway_port: int = 0
) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """The services ``names`` as processes on the Redis at ``port`` (logs in ``tmp_path``)."""
    env = {
        **os.environ,
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "RENATURE_LOG_LEVEL": "INFO",
        "RENATURE_RATE_LIMITS": "off",
        "RENATURE_GATEWAY_WORKERS": "1",
    }
    env.pop("RENATURE_CONSUMER", None)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for name in names:
        log = (tmp_path / f"{name}.log").open("ab")
        extra = ["--port", str(gateway_port)] if name == "gateway" else []
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "gameserver.runtime.supervisor", name, *extra],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
    try:
        yield procs
    finally:
        for proc in procs.values():
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


async def command_answered(url: str, game_id: str, timeout: float) -> float:
    """Seconds until a CreateGame is answered accepted (bounded by ``timeout``)."""
    started = time.monotonic()
    client = aioredis.Redis.from_url(url)
    try:
        while time.monotonic() - started < timeout:
            try:
                async with RulesClient(client) as rules:
                    envelope = bus.CommandEnvelope(
                        game_id, "create", c.CreateGame(game_id, 2, "", "base"), None
                    )
                    reply = await rules.send(envelope, timeout=2.0)
                if reply.status == "accepted":
                    return time.monotonic() - started
            except Exception:  # Redis not there yet, no reply yet: try again
                await asyncio.sleep(0.1)
        raise AssertionError(f"no accepted reply for {game_id} within {timeout} s")
    finally:
        await client.aclose()


async def projected(url: str, game_id: str, timeout: float) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if await client.hget(LAYOUT.model_key("board", game_id), "version"):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"{game_id} was not projected within {timeout} s")
    finally:
        await client.aclose()


async def test_services_started_before_redis_and_redis_coming_back_empty(
    port: int, services: dict[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    await asyncio.sleep(3)  # deliberately idle: the services start, find no Redis, keep trying
    assert all(proc.poll() is None for proc in services.values()), "a service gave up"
    (tmp_path / "first").mkdir()
    (tmp_path / "empty").mkdir()
    with RedisServer(port=port, data_dir=tmp_path / "first") as first:
        await command_answered(first.url, "g-before", timeout=60)
        await projected(first.url, "g-before", timeout=30)
    # Redis is gone and comes back with nothing: no stream, no consumer group.
    with RedisServer(port=port, data_dir=tmp_path / "empty") as empty:
        waited = await command_answered(empty.url, "g-after", timeout=30)
        await projected(empty.url, "g-after", timeout=30)
        assert waited < 10, f"the rules service took {waited:.1f} s to serve again"
    assert all(proc.poll() is None for proc in services.values()), "a service exited"


async def test_a_redis_outage_is_a_503_with_retry_after_never_a_500(
    port: int, tmp_path: Path
) -> None:
    """The gateway while Redis is down: every answer is 503 with Retry-After; once Redis is
    back (with its data), requests succeed again."""
    from gameserver.gateway.app import create_app
    from gameserver.rules.rules_service import RulesService
    from gameserver.runtime.settings import Settings
    from support.gateway import gateway_settings

    server = RedisServer(port=port, data_dir=tmp_path, appendonly=True)
    server.start()
    try:
        app = create_app(gateway_settings(server.url), command_timeout=3.0)
        transport = httpx.ASGITransport(app=app)
        async with (
            RulesService(Settings.of(redis_url=server.url, consumer="outage")),
            app.router.lifespan_context(app),
            httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
        ):
            created = await http.post("/games", json={"players": 2})
            assert created.status_code == 201
            game_id = created.json()["game_id"]
            server.stop(kill=True)
            answers = [
                await http.post("/games", json={"players": 2}),
                await http.get(f"/games/{game_id}"),
                await http.get(f"/games/{game_id}/spectator"),
                await http.post(f"/games/{game_id}/seats/0", json={"name": "Ada"}),
            ]
            for answer in answers:
                assert answer.status_code == 503, answer.text
                assert answer.headers["Retry-After"] == "1"
                assert answer.json()["error"]["code"] == "store_unavailable"
            server.start()
            # A client retries an unknown outcome with the same key until it has an answer
            # (the reply channel is subscribed again before a command is sent: no 504).
            key = {"Idempotency-Key": "outage-join-key-0123456789"}
            deadline = time.monotonic() + 30
            while True:
                joined = await http.post(
                    f"/games/{game_id}/seats/0", json={"name": "Ada"}, headers=key
                )
                if joined.status_code not in (503, 504) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
            assert joined.status_code == 201, joined.text
    finally:
        server.cleanup()


@pytest.mark.parametrize("idle", [0.0, 6.0])
def test_a_gateway_started_before_a_redis_restart_answers_within_a_second(
    port: int, tmp_path: Path, idle: float
) -> None:
    """The failure this guards against: gateways started before Redis restarted answered
    ``503 store_unavailable`` ("Connection closed by server.") long after Redis was back: each
    stale connection of the gateway's pool failed one request (redis-py 8 skipped its check of
    pooled connections).
    Here a gateway and a rules service outlive a restart of Redis on the same port (its data
    gone) and, after ``idle`` seconds, a burst of creations: no 5xx once Redis has answered for
    a second."""
    gateway_port = free_port()
    (tmp_path / "first").mkdir()
    (tmp_path / "again").mkdir()
    redis_server = RedisServer(port=port, data_dir=tmp_path / "first").start()
    with (
        running(port, tmp_path, ["rules", "gateway"], gateway_port) as procs,
        httpx.Client(base_url=f"http://127.0.0.1:{gateway_port}", timeout=15) as http,
    ):
        try:
            deadline = time.monotonic() + 60
            while not _created(http):
                assert time.monotonic() < deadline, "the stack did not come up"
                time.sleep(0.1)
            with ThreadPoolExecutor(8) as pool:  # many connections in the gateway's pool
                statuses = list(pool.map(lambda _: _status(http), range(40)))
            assert statuses == [201] * 40
            redis_server.cleanup()
            redis_server = RedisServer(port=port, data_dir=tmp_path / "again").start()
            back = time.monotonic()  # Redis answers PING again
            time.sleep(idle)  # an idle stack (the first creation seen failing came 45 s later)
            late = []
            for _ in range(60):
                status = _status(http)
                if status >= 500 and time.monotonic() - back > 1.0:
                    late.append((round(time.monotonic() - back, 2), status))
            assert not late, f"5xx more than a second after Redis was back: {late}"
            assert all(proc.poll() is None for proc in procs.values()), "a service exited"
        finally:
            redis_server.cleanup()


def _status(http: httpx.Client) -> int:
    return http.post("/games", json={"players": 2}).status_code


def _created(http: httpx.Client) -> bool:
    try:
        return _status(http) == 201
    except httpx.TransportError:
        return False
