"""A stack configured with another key prefix keeps every key under it: the command stream,
the game's stream, feed, seat tokens, seed and the rest (``KeyLayout`` builds them all)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import httpx
import pytest
import redis.asyncio as aioredis

from eventstore import CommandPartitions, KeyLayout
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


@pytest.fixture
async def client(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[GatewayClient]:
    app = create_app(
        gateway_settings(redis_url, prefix="alt", allow_chosen_seeds=True), command_timeout=5.0
    )
    transport = httpx.ASGITransport(app=app)
    settings = Settings.of(redis_url=redis_url, prefix="alt", consumer="rules-alt")
    async with (
        RulesService(settings),
        app.router.lifespan_context(app),
        GatewayClient("http://gateway", transport=transport) as gateway,
    ):
        yield gateway


async def test_a_game_played_under_another_prefix_writes_only_keys_under_it(
    client: GatewayClient, redis: aioredis.Redis
) -> None:
    game_id = await client.create_game(2, seed="prefix-seed")
    tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    await client.start(game_id, tokens[0])
    assert (await client.view(game_id, tokens[0])).version > 1
    keys = sorted(cast(bytes, key).decode() for key in await redis.keys("*"))
    assert CommandPartitions(KeyLayout("alt")).stream_of(game_id) in keys
    assert any(key.endswith(f":game:{game_id}") for key in keys)
    assert [key for key in keys if not key.startswith("alt:")] == []
