"""A live feed reader's own reads (`live_hub.feed_reads`) against a real Redis, in both of its
protocols: the entries as Redis sends them, nothing when the block runs out, and the reader's
connection gone once its client is closed."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from gameserver.gateway import live_hub
from support.monitor import addresses

pytestmark = pytest.mark.redis


@pytest.mark.parametrize("protocol", [2, 3])
async def test_a_feed_reader_reads_what_was_appended_after_its_position(
    redis: aioredis.Redis, redis_url: str, protocol: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_hub, "READ_BLOCK_MS", 200)
    key = f"feed-{protocol}"
    first = await redis.xadd(key, {"game": "g-1", "version": 1, "event": b"\x00one"})
    second = await redis.xadd(key, {"game": "g-2", "version": 7, "event": b"two"})
    name = f"feed-reader-{protocol}"
    shared = aioredis.Redis.from_url(redis_url, protocol=protocol, client_name=name)
    client = await live_hub.live_reader(shared)
    try:
        read = await live_hub.feed_reads(client, key)
        assert await read(b"0-0") == [
            (first, {b"game": b"g-1", b"version": b"1", b"event": b"\x00one"}),
            (second, {b"game": b"g-2", b"version": b"7", b"event": b"two"}),
        ]
        assert await read(first) == [
            (second, {b"game": b"g-2", b"version": b"7", b"event": b"two"})
        ]
        assert await read(second) == []  # the block ran out: nothing new
        assert len(await addresses(redis, name)) == 1  # the reader's one connection
    finally:
        await client.aclose()
    # The server drops a closed connection when it next reads its socket: wait for that.
    async with asyncio.timeout(5):
        while await addresses(redis, name):
            await asyncio.sleep(0.01)
