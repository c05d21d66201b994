"""``renature feeds``: the groups on the partition feeds listed, and one nobody reads any more
retired from every feed (a deployment moved to ``serve models`` leaves the board and score
projectors' groups, which would hold every feed's trimming back for ever)."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from typer.testing import CliRunner

from eventstore import KeyLayout
from eventstore.redis_values import stream_reply, text
from gameserver.cli import app
from gameserver.runtime import bus

pytestmark = pytest.mark.redis

FEEDS = [KeyLayout().feed_key(partition) for partition in (0, 3)]


async def feeds_read(redis: aioredis.Redis) -> None:
    """Two feeds of entries: the board projector's group has read two of each and acknowledged
    none, the models projector's has read and acknowledged all."""
    for feed in FEEDS:
        for n in range(3):
            await redis.xadd(feed, {"n": n})
        for group in (bus.BOARD_GROUP, bus.MODELS_GROUP):
            await redis.xgroup_create(feed, group, id="0")
        await redis.xreadgroup(bus.BOARD_GROUP, "board-1", {feed: ">"}, count=2)
        reply = await redis.xreadgroup(bus.MODELS_GROUP, "models-1", {feed: ">"})
        for _, read in stream_reply(reply):
            await redis.xack(feed, bus.MODELS_GROUP, *(text(entry_id) for entry_id, _ in read))


def feeds(redis_url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["feeds", *args, "--redis-url", redis_url])
    return result.exit_code, result.output


async def test_a_group_nobody_reads_is_retired_from_every_feed_and_one_still_read_is_not(
    redis: aioredis.Redis, redis_url: str
) -> None:
    await feeds_read(redis)
    code, out = await asyncio.to_thread(feeds, redis_url, "groups")
    assert code == 0, out
    assert "board-projector: 2 feeds, 2 consumers, 4 pending, 2 behind, last read 0 s ago" in out
    assert "models-projector: 2 feeds, 2 consumers, 0 pending, 0 behind" in out

    code, out = await asyncio.to_thread(feeds, redis_url, "retire", bus.BOARD_GROUP)
    assert code == 2
    assert "is still read" in out  # its consumer read just now
    await asyncio.sleep(1.2)
    code, out = await asyncio.to_thread(
        feeds, redis_url, "retire", bus.BOARD_GROUP, "--active-within", "1"
    )
    assert code == 0, out
    assert "Retired board-projector from 2 feeds (4 pending dropped)" in out
    for feed in FEEDS:
        assert [text(g["name"]) for g in await redis.xinfo_groups(feed)] == [bus.MODELS_GROUP]

    code, out = await asyncio.to_thread(feeds, redis_url, "retire", bus.BOARD_GROUP, "--force")
    assert code == 2
    assert "No consumer group 'board-projector'" in out
