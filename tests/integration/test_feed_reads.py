"""A live feed reader's own reads (`live_hub.feed_reads`) against a real Redis, in both of its
protocols: the entries as Redis sends them, nothing when the block runs out, and the reader's
connection gone once its client is closed; and a partition's reader outliving its last
follower for a while (`live_hub.LINGER_S`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from eventstore import KeyLayout
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


async def test_a_reader_left_by_its_last_follower_serves_the_next_on_its_connection(
    redis: aioredis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket opened on a partition soon after its last one closed (the players' next game,
    a reload) takes up the reader still running: no new Redis connection, no new position. A
    reader left alone for `LINGER_S` stops at the end of a read."""
    monkeypatch.setattr(live_hub, "READ_BLOCK_MS", 200)
    layout = KeyLayout(partitions=1)  # every game on the one partition
    hub = live_hub.LiveHub(layout, aioredis.Redis.from_url(redis_url))
    opened = 0
    open_client = hub.open_client

    async def counted() -> Any:
        nonlocal opened
        opened += 1
        return await open_client()

    monkeypatch.setattr(hub, "open_client", counted)
    try:
        first = await hub.follow("g-1")
        reader = hub.readers[0]
        hub.leave(first)
        await asyncio.sleep(0.5)  # two reads and more with no follower: still reading
        second = await hub.follow("g-2")
        assert hub.readers[0] is reader
        assert not reader.closing
        assert opened == 1
        await redis.xadd(layout.feed_key(0), {"game": "g-2", "version": 1, "event": b"e"})
        assert await asyncio.wait_for(second.get(), 5) == (1, b"e")
        hub.leave(second)
        monkeypatch.setattr(live_hub, "LINGER_S", 0.1)
        await asyncio.wait_for(reader.task, 5)  # alone past the linger: it stopped
        assert hub.connections() == 0
        assert 0 not in hub.readers
    finally:
        async with asyncio.timeout(5):
            await hub.aclose()
        await hub.redis.aclose()


async def test_a_hub_closes_at_once_though_its_readers_had_just_started(redis_url: str) -> None:
    """A socket opened just before the gateway stops: its partition's reader is cancelled while
    redis-py sends its first read under ``asyncio.wait_for``, which on Python 3.11 loses a
    cancellation that meets the end of what it waits for. The hub cancels it again: closing
    takes moments (before, it waited for ever: the reader still had its follower)."""
    for _ in range(5):
        hub = live_hub.LiveHub(KeyLayout(partitions=1), aioredis.Redis.from_url(redis_url))
        try:
            await hub.follow("g-1")
            reader = hub.readers[0]
            loop = asyncio.get_running_loop()
            began = loop.time()
            async with asyncio.timeout(20):  # a guard: a timeout's own cancel may end it
                await hub.aclose()
            assert loop.time() - began < 2
            assert reader.task.done()
        finally:
            await hub.redis.aclose()
