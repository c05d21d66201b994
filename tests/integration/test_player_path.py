"""The player's path made cheap: commands and their answers over the live WebSocket,
seat tokens resolved in process, the gateway served by several worker processes, the access
log sampled or off. Real Redis, the real rules service, uvicorn on a free port."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import uvicorn
from websockets.asyncio.client import connect

from devkit.redis_server import free_port
from devkit.waiting import eventually
from eventstore import KeyLayout
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway import live_answers
from gameserver.gateway.app import create_app
from gameserver.gateway.token_cache import CachedSeatTokens
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.logging import SampledFilter
from gameserver.runtime.settings import WORKER_SETTINGS_ENV, Settings
from gameserver.runtime.settings_parts import RateLimits
from renature.state import GameState
from support.gateway import gateway_settings
from support.hosting import state_as
from support.manual_clock import ManualClock

pytestmark = pytest.mark.redis


@pytest.fixture
async def served(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[tuple[str, Any]]:
    """The gateway and a rules service on the test's Redis; (base URL, the app)."""
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-player")):
        task = asyncio.create_task(server.serve())
        await eventually(lambda: server.started or task.done(), "uvicorn serving", timeout=10)
        assert server.started
        try:
            yield f"127.0.0.1:{port}", app
        finally:
            server.should_exit = True
            await task


async def new_game(base: str, players: int = 2) -> tuple[str, list[str]]:
    async with GatewayClient(f"http://{base}") as client:
        game_id = await client.create_game(players, seed="player-path")
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(players)]
        await client.start(game_id, tokens[0])
    return game_id, tokens


async def answer_of(ws: Any, command_id: str) -> dict[str, Any]:
    """Skip pushed events until the answer to ``command_id`` comes (5 s at most)."""
    deadline = time.monotonic() + 5
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic())))
        if "answer" in frame and frame["answer"]["command_id"] == command_id:
            return dict(frame)


async def test_moves_and_their_answers_ride_the_live_websocket(
    served: tuple[str, Any],
) -> None:
    base, _ = served
    game_id, tokens = await new_game(base)
    url = f"ws://{base}/games/{game_id}/live"
    async with GatewayClient(f"http://{base}") as client:
        state = await state_as(client, game_id, tokens[0], GameState)
        seat = state.current
        legal = await client.legal_actions(game_id, tokens[seat])
    async with connect(f"{url}?token={tokens[seat]}") as ws, connect(url) as spectator:
        command = {"command_id": "m1", "command": _wire(legal[0]), "events": True, "view": True}
        command["legal_actions"] = True
        await ws.send(json.dumps(command))
        frame = await answer_of(ws, "m1")
        answer = frame["answer"]
        assert answer["status"] == "accepted"
        assert answer["first_version"] <= answer["last_version"] == answer["version"]
        count = answer["last_version"] - answer["first_version"] + 1
        assert [e["version"] for e in frame["events"]] == list(
            range(answer["first_version"], answer["first_version"] + count)
        )
        assert frame["view"]["viewer"] == seat
        assert frame["view"]["version"] >= answer["last_version"]
        assert isinstance(frame["legal_actions"], list)
        # The same id again is the same command: its one outcome, nothing appended twice.
        await ws.send(json.dumps({"command_id": "m1", "command": _wire(legal[0])}))
        again = (await answer_of(ws, "m1"))["answer"]
        assert again["last_version"] == answer["last_version"]
        # A move out of turn is refused as over HTTP (409 not_your_turn), nothing appended.
        other = 1 - seat
        await ws.send(
            json.dumps({"command_id": "m2", "command": {"type": "EndTurn", "seat": other}})
        )
        refused = (await answer_of(ws, "m2"))["answer"]
        assert refused["status"] == "rejected"
        assert (refused["http_status"], refused["error"]["code"]) == (403, "wrong_seat")
        await ws.send("not json")
        malformed = (await answer_of(ws, ""))["answer"]
        assert (malformed["http_status"], malformed["error"]["code"]) == (422, "malformed_request")
        await spectator.send(json.dumps({"command_id": "s1", "command": {"type": "EndTurn"}}))
        unseated = (await answer_of(spectator, "s1"))["answer"]
        assert (unseated["http_status"], unseated["error"]["code"]) == (403, "not_seated")


@pytest.mark.parametrize("hold_s", [live_answers.HOLD_S, 0.0], ids=["answers-ride", "no-wait"])
async def test_a_game_played_to_its_end_over_the_websocket(
    served: tuple[str, Any], hold_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every move of a whole game over the seats' sockets; the last answer arrives although
    the game's end closes the channel right after it: in the write of the last pushes, or
    (where neither waits for the other) before the channel closes, which waits for it."""
    monkeypatch.setattr(live_answers, "HOLD_S", hold_s)
    base, _ = served
    game_id, tokens = await new_game(base)
    url = f"ws://{base}/games/{game_id}/live"
    async with (
        connect(f"{url}?token={tokens[0]}") as ws0,
        connect(f"{url}?token={tokens[1]}") as ws1,
        httpx.AsyncClient(base_url=f"http://{base}") as http,
    ):
        sockets, moves = [ws0, ws1], 0
        while True:
            summary = (await http.get(f"/games/{game_id}")).json()
            if summary["phase"] in ("final_scoring", "finished"):
                break
            seat = summary["current_seat"]
            legal = (
                await http.get(
                    f"/games/{game_id}/legal-actions",
                    headers={"Authorization": f"Bearer {tokens[seat]}"},
                )
            ).json()
            message = {"command_id": f"g{moves}", "command": legal[0]}
            await sockets[seat].send(json.dumps(message))
            answer = (await answer_of(sockets[seat], f"g{moves}"))["answer"]
            assert answer["status"] == "accepted", answer
            moves += 1
            assert moves < 2_000
        assert moves > 20
        await eventually_finished(http, game_id)


async def eventually_finished(http: httpx.AsyncClient, game_id: str) -> None:
    deadline = time.monotonic() + 10
    while (await http.get(f"/games/{game_id}")).json()["phase"] != "finished":
        assert time.monotonic() < deadline, "the game did not finish"
        await asyncio.sleep(0.05)


async def test_seat_tokens_are_looked_up_once_then_answered_from_memory(
    redis: aioredis.Redis,
) -> None:
    clock = ManualClock()
    tokens = CachedSeatTokens(redis, KeyLayout(), revalidate_s=0.3, clock=clock)
    assert await tokens.claim("g1", 0, "secret-0")
    for _ in range(5):
        assert await tokens.seat_of("g1", "secret-0") == 0
    assert tokens.lookups == 1
    assert await tokens.seat_of("g1", "made-up") is None
    assert await tokens.seat_of("g1", "made-up") is None
    assert tokens.lookups == 3  # wrong tokens are never cached
    clock.now += 0.35  # past revalidate_s
    assert await tokens.seat_of("g1", "secret-0") == 0
    assert tokens.lookups == 4  # re-checked once the entry is older than revalidate_s
    await redis.delete(tokens.key("g1"))  # the seat hash lapsed (the game ended long ago)
    tokens.ended("g1")
    assert await tokens.seat_of("g1", "secret-0") is None  # no memory of an ended game


async def test_a_games_tokens_are_looked_up_again_together_and_a_seat_taken_back_is_seen(
    redis: aioredis.Redis,
) -> None:
    """One read of a game's seat hash answers for every seat: the first token asked for reads
    it, and the game's other tokens are answered from that read (one lookup per game, not per
    seat, and none for a seat claimed through another instance); once the entries are older
    than ``revalidate_s``, the first token asked for reads it again for all. A seat taken back
    through another instance (its old token no longer stored) is refused here at the first
    lookup after ``revalidate_s``, whichever of the game's tokens made it."""
    clock = ManualClock()
    tokens = CachedSeatTokens(redis, KeyLayout(), revalidate_s=0.3, clock=clock)
    elsewhere = CachedSeatTokens(redis, KeyLayout())  # another gateway instance
    for seat in range(4):
        assert await tokens.claim("g1", seat, f"secret-{seat}")
    assert [await tokens.seat_of("g1", f"secret-{seat}") for seat in range(4)] == [0, 1, 2, 3]
    assert tokens.lookups == 1  # the first read answered for all four
    clock.now += 0.35  # past revalidate_s
    for _ in range(3):
        assert [await tokens.seat_of("g1", f"secret-{seat}") for seat in range(4)] == [0, 1, 2, 3]
    assert tokens.lookups == 2  # one read refreshed all four
    await elsewhere.free("g1", 2)  # seat 2's token no longer holds it (taken back, left)
    assert await elsewhere.claim("g1", 2, "secret-new")
    assert await tokens.seat_of("g1", "secret-2") == 2  # within revalidate_s: remembered
    clock.now += 0.35
    assert await tokens.seat_of("g1", "secret-0") == 0  # this lookup read the hash again
    assert tokens.lookups == 3
    assert await tokens.seat_of("g1", "secret-2") is None  # a lookup of its own: refused
    assert tokens.lookups == 4
    assert await tokens.seat_of("g1", "secret-new") == 2  # answered from the read before
    assert [await tokens.seat_of("g1", f"secret-{seat}") for seat in (1, 3)] == [1, 3]
    assert tokens.lookups == 4


async def test_made_up_tokens_choose_their_bucket_without_a_lookup_each(
    redis: aioredis.Redis,
) -> None:
    """The rate limits ask `holder_of` which bucket a request counts in: a flood of made-up
    tokens reads the game's seat hash once per snapshot, not once per token; a seat claimed
    through another instance is seen once the snapshot is ``snapshot_s`` old."""
    clock = ManualClock()
    tokens = CachedSeatTokens(redis, KeyLayout(), snapshot_s=0.1, clock=clock)
    elsewhere = CachedSeatTokens(redis, KeyLayout())  # another gateway instance
    assert await tokens.claim("g1", 0, "secret-0")
    assert await tokens.holder_of("g1", "secret-0") == 0
    for n in range(1_000):
        assert await tokens.holder_of("g1", f"made-up-{n}") is None
    assert tokens.lookups == 1
    assert await elsewhere.claim("g1", 1, "secret-1")
    assert await tokens.holder_of("g1", "secret-1") is None  # the snapshot is still fresh
    clock.now += 0.15  # past snapshot_s
    assert await tokens.holder_of("g1", "secret-1") == 1
    assert tokens.lookups == 2
    assert await tokens.seat_of("g1", "secret-1") == 1  # the routes' check is exact as before
    await redis.delete(tokens.key("g1"))  # the seat hash lapsed after the end
    tokens.ended("g1")
    assert await tokens.holder_of("g1", "secret-0") is None


def test_the_access_log_is_off_sampled_or_on() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, "GET /", None, None)
    assert not any(SampledFilter(0.0).filter(record) for _ in range(1000))
    assert all(SampledFilter(1.0).filter(record) for _ in range(1000))
    kept = sum(SampledFilter(0.1).filter(record) for _ in range(10_000))
    assert 700 < kept < 1300
    assert Settings.from_env({}).logging.access_log_sample == 0.0
    assert Settings.from_env({"RENATURE_ACCESS_LOG": "on"}).logging.access_log_sample == 1.0
    assert Settings.from_env({"RENATURE_ACCESS_LOG": "0.01"}).logging.access_log_sample == 0.01


def test_workers_get_the_settings_the_gateway_was_started_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings.of(
        redis_url="redis://elsewhere:1/0",
        gateway_workers=3,
        partitions=8,
        cors_origins=("https://play.example",),
        limits=RateLimits(create="5/minute"),
        token_ttl_after_end_s=None,
    )
    monkeypatch.setenv(WORKER_SETTINGS_ENV, "")  # restored after the test
    settings.hand_to_workers()
    handed = Settings.handed_to_worker()
    assert handed.consumers.consumer != settings.consumers.consumer  # one name per process
    assert handed == settings.with_(consumer=handed.consumers.consumer)


def test_the_gateway_runs_as_several_worker_processes(redis_url: str) -> None:
    """``RENATURE_GATEWAY_WORKERS=2``: two processes answer on one port."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RENATURE_GATEWAY_WORKERS": "2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gameserver.runtime.supervisor", "gateway", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the gateway exited"
            assert time.monotonic() < deadline, "the gateway did not answer within 60 s"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        children = subprocess.run(
            ["pgrep", "-g", str(process.pid), "-f", "multiprocessing.spawn"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        assert len(children) == 2
    finally:
        os.killpg(process.pid, 9)  # the whole group: the parent and its workers
        process.wait(timeout=20)


def _wire(command: msgspec.Struct) -> dict[str, Any]:

    return dict(msgspec.to_builtins(command))
