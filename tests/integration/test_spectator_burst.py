"""A burst of spectators against a real gateway and Redis: refused from memory, backlogs in turn.

A spectator's live connection refused once for a cap is refused again from the instance's
memory, costing Redis nothing (its handshake answered HTTP 429, no upgrade); spectators'
backlogs take a few turns per worker while a seat's
channel never waits; a finished game's frames are worked out once and are the same frames the
stream's own path sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect

from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.dependencies import Gateway
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits
from support.gateway import (
    gateway_settings,
    refused_handshake,
    refused_live,
    serving,
    started_game,
)

pytestmark = pytest.mark.redis

LIMITS = RateLimits(live="1000/minute", live_per_address=100, live_per_game=3)
PLAYER = ("10.0.0.9", 40009)
SPECTATORS = 50


@dataclass
class Served:
    app: FastAPI
    address: str
    http: httpx.AsyncClient

    @property
    def gateway(self) -> Gateway:
        gateway: Gateway = self.app.state.gateway
        return gateway

    def client(self) -> GatewayClient:
        transport = httpx.ASGITransport(app=self.app, client=PLAYER)
        return GatewayClient("http://gateway", transport=transport)


async def served_gateway(redis_url: str, limits: RateLimits) -> AsyncIterator[Served]:
    settings = gateway_settings(redis_url, allow_chosen_seeds=True, limits=limits)
    app = create_app(settings, command_timeout=5.0)
    transport = httpx.ASGITransport(app=app, client=PLAYER)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-spectators")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport, timeout=30) as http,
        serving(app) as address,
    ):
        try:
            yield Served(app, address, http)
        finally:
            if (limiter := getattr(app.state, "limiter", None)) is not None:
                await limiter.aclose()


@pytest.fixture
async def limited(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Served]:
    """A served gateway whose games take 3 spectators' live connections at most."""
    async for served in served_gateway(redis_url, LIMITS):
        yield served


@pytest.fixture
async def open_gateway(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Served]:
    """A served gateway without rate limits (nothing caps the spectators)."""
    async for served in served_gateway(redis_url, RateLimits(enabled=False)):
        yield served


async def scripts_run(redis: aioredis.Redis) -> int:
    """Lua scripts and sorted-set writes Redis ran so far (the live bucket and the leases)."""
    stats: dict[str, Any] = await redis.info("commandstats")
    names = ("cmdstat_evalsha", "cmdstat_eval", "cmdstat_zadd", "cmdstat_zrem")
    return sum(int(stats[name]["calls"]) for name in names if name in stats)


async def until(condition: Any, what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def test_a_spectator_at_the_games_cap_is_refused_from_memory_at_no_redis_cost(
    limited: Served, redis: aioredis.Redis
) -> None:
    game_id, tokens = await started_game(limited.http, seed="spectators")
    game_key = f"rn:limits:live:game:{{{game_id}}}"
    await redis.zadd(game_key, {f"held-{n}": time.time() + 60 for n in range(3)})
    url = f"ws://{limited.address}/games/{game_id}/live"
    first = await refused_live(url)  # Redis says the game is at its cap
    assert first["error"]["code"] == "rate_limited"
    memory = limited.app.state.limiter.live_refusals
    assert memory.refused == 0
    before = await scripts_run(redis)
    again = [await refused_handshake(url) for _ in range(5)]
    assert await scripts_run(redis) == before  # no bucket, no lease, nothing given back
    assert memory.refused == 5
    for status, retry_after, body in again:  # the handshake itself refused: no upgrade
        assert status == 429
        assert retry_after is not None
        assert 1 <= int(retry_after) <= 10
        assert body["error"]["code"] == "rate_limited"
        assert body["error"]["message"] == f"Too many requests; retry in {retry_after} s."
    # A seat's live channel is never refused for the spectators' cap.
    async with connect(f"{url}?token={tokens[0]}") as seat:
        assert json.loads(await asyncio.wait_for(seat.recv(), 5))["version"] == 1


async def test_a_freed_slot_of_this_instance_is_taken_at_once(
    limited: Served, redis: aioredis.Redis
) -> None:
    game_id, _ = await started_game(limited.http, seed="spectators")
    url = f"ws://{limited.address}/games/{game_id}/live"
    async with connect(url) as one, connect(url) as two, connect(url) as three:
        for ws in (one, two, three):
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["version"] == 1
        assert (await refused_live(url))["error"]["code"] == "rate_limited"  # the cap of 3
    game_key = f"rn:limits:live:game:{{{game_id}}}"
    deadline = time.monotonic() + 5
    while await redis.zcard(game_key):
        assert time.monotonic() < deadline, "the leases were not given back"
        await asyncio.sleep(0.02)
    async with connect(url) as fourth:  # not refused from memory: the slots were given back
        assert json.loads(await asyncio.wait_for(fourth.recv(), 5))["version"] == 1


async def first_frame(ws: ClientConnection) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 10)))


async def test_a_seats_channel_is_served_while_50_spectators_backlogs_wait(
    open_gateway: Served,
) -> None:
    game_id, tokens = await started_game(open_gateway.http, seed="spectators")
    backlogs = open_gateway.gateway.spectator_backlogs
    held = [await backlogs.take_turn(True) for _ in range(4)]  # every turn taken
    url = f"ws://{open_gateway.address}/games/{game_id}/live"
    async with contextlib.AsyncExitStack() as stack:
        spectators = [await stack.enter_async_context(connect(url)) for _ in range(SPECTATORS)]
        await until(lambda: backlogs.waiting == SPECTATORS, "the spectators did not wait")
        async with connect(f"{url}?token={tokens[0]}") as seat:
            assert (await first_frame(seat))["version"] == 1  # while 50 wait
        assert backlogs.waiting == SPECTATORS
        for give_back in held:
            give_back()
        for ws in spectators:
            assert (await first_frame(ws))["version"] == 1
        await until(lambda: backlogs.waiting == 0, "spectators still wait")


async def test_a_finished_games_frames_are_made_once_and_match_the_stream(
    open_gateway: Served,
) -> None:
    async with open_gateway.client() as client:
        result = await play_game(client, 2, "spectators-finished", ["greedy", "random"])
    game_id = result.game_id
    url = f"ws://{open_gateway.address}/games/{game_id}/live"
    seen = []
    for _ in range(3):
        frames = []
        async with connect(url) as ws:
            async for text in ws:
                frames.append(json.loads(text))
            assert ws.close_code == 1000
        seen.append(frames)
    backlogs = open_gateway.gateway.spectator_backlogs
    assert backlogs.made == 1  # worked out once, the other two from memory
    assert seen[0] == seen[1] == seen[2]
    assert [frame["version"] for frame in seen[0]] == list(range(1, len(seen[0]) + 1))
    streamed = await stream_frames(open_gateway.http, game_id)
    assert streamed == seen[0]  # the frames the stream's own path sends a spectator
    async with connect(f"{url}?after=3") as ws:  # resumed: only what follows
        rest = [json.loads(text) async for text in ws]
    assert rest == seen[0][3:]


async def stream_frames(http: httpx.AsyncClient, game_id: str) -> list[Any]:
    """A spectator's server-sent events of ``game_id`` (the live hub's path, not the cache)."""
    frames = []
    async with http.stream("GET", f"/games/{game_id}/events/stream") as response:
        assert response.status_code == 200
        event = None
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line.partition(":")[2].strip()
            elif line.startswith("data:") and event != "end":
                frames.append(json.loads(line.partition(":")[2]))
            if event == "end":
                break
    return frames
