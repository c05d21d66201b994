"""An append that settles its command (`eventstore.Settlement`): on one Redis the append script
also publishes the command's reply and acknowledges the command's stream entry, in the same
atomic step, and only when the events were appended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import msgspec
import pytest
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub

from eventstore import (
    Appended,
    AppendRequest,
    Conflict,
    Duplicate,
    RedisEventStore,
    Settlement,
)
from eventstore.memory_store import MemoryEventStore

pytestmark = pytest.mark.redis

GAME = "game-1"
STREAM = "rn:{p00}:commands"
GROUP = "rules"
CHANNEL = "rn:reply:test"


@pytest.fixture
async def pending(redis: aioredis.Redis) -> list[bytes]:
    """Three commands on a command stream, read by the group and not yet acknowledged."""
    await redis.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    for n in range(3):
        await redis.xadd(STREAM, {"__data__": f"command {n}"})
    read = cast(
        "list[tuple[bytes, list[tuple[bytes, Any]]]]",
        await redis.xreadgroup(GROUP, "instance", {STREAM: ">"}),
    )
    [(_, entries)] = read
    return [entry_id for entry_id, _ in entries]


@pytest.fixture
async def replies(redis: aioredis.Redis) -> AsyncIterator[PubSub]:
    channel = redis.pubsub()
    await channel.subscribe(CHANNEL)
    await channel.get_message(timeout=1)  # the subscription's confirmation
    yield channel
    await channel.unsubscribe()
    await channel.aclose()  # type: ignore[no-untyped-call]


def request(command_id: str, version: int, entry_id: bytes, reply: bytes) -> AppendRequest:
    events = [msgspec.json.encode({"type": "moved", "by": command_id})]
    settled = Settlement(CHANNEL, reply, STREAM, GROUP, entry_id)
    return AppendRequest(GAME, command_id, version, events, b"outcome " + reply, settlement=settled)


async def published(channel: PubSub) -> list[bytes]:
    """What the channel received until it stayed quiet for a moment."""
    received = []
    while (message := await channel.get_message(timeout=0.2)) is not None:
        received.append(message["data"])
    return received


async def still_pending(redis: aioredis.Redis) -> set[bytes]:
    entries = await redis.xpending_range(STREAM, GROUP, min="-", max="+", count=10)
    return {cast(bytes, entry["message_id"]) for entry in entries}


async def test_an_append_publishes_its_reply_and_acknowledges_its_command(
    redis: aioredis.Redis, pending: list[bytes], replies: PubSub
) -> None:
    store = RedisEventStore(redis)
    assert store.settles_in_append
    results = await store.append_many(
        [request("c1", 0, pending[0], b"reply 1"), request("c2", 1, pending[1], b"reply 2")]
    )
    assert results == [Appended(1, 1), Appended(2, 2)]
    assert await published(replies) == [b"reply 1", b"reply 2"]
    assert await still_pending(redis) == {pending[2]}
    assert await store.get_outcome(GAME, "c1") == b"outcome reply 1"


async def test_a_conflict_or_a_duplicate_settles_nothing(
    redis: aioredis.Redis, pending: list[bytes], replies: PubSub
) -> None:
    store = RedisEventStore(redis)
    [first] = await store.append_many([request("c1", 0, pending[0], b"reply 1")])
    assert first == Appended(1, 1)
    assert await published(replies) == [b"reply 1"]

    again = request("c1", 0, pending[1], b"reply again")  # a retry: answered with the first's
    late = request("c2", 0, pending[2], b"reply late")  # decided on version 0: too late
    assert await store.append_many([again, late]) == [
        Duplicate(b"outcome reply 1"),
        Conflict(0, 1),
    ]
    assert await published(replies) == []
    assert await still_pending(redis) == {pending[1], pending[2]}
    assert await store.version(GAME) == 1


async def test_a_store_that_cannot_settle_says_so_and_refuses_a_settlement(
    redis: aioredis.Redis, pending: list[bytes], replies: PubSub
) -> None:
    """The ``replica`` mode answers only after its wait for the replicas (a reply published
    by the script would outrun it); the memory store has no channels. Nothing is written."""
    settling = request("c1", 0, pending[0], b"reply 1")
    waiting = RedisEventStore(redis, durability="replica")
    assert not waiting.settles_in_append
    with pytest.raises(ValueError, match="settles_in_append"):
        await waiting.append_many([settling])
    memory = MemoryEventStore()
    assert not memory.settles_in_append
    with pytest.raises(ValueError, match="settles_in_append"):
        await memory.append_many([settling])
    assert await RedisEventStore(redis).version(GAME) == 0
    assert await published(replies) == []
    assert await still_pending(redis) == set(pending)


async def test_the_reply_is_published_after_the_events_are_stored(
    redis: aioredis.Redis, redis_url: str, pending: list[bytes], replies: PubSub
) -> None:
    """Whoever gets a reply finds its events already there (one atomic step): the n-th reply
    is read at version n or later, on another connection."""
    store = RedisEventStore(redis)
    other = aioredis.Redis.from_url(redis_url)
    reader = RedisEventStore(other)

    async def versions_seen_at_each_reply() -> list[int]:
        seen: list[int] = []
        while len(seen) < len(pending):
            if await replies.get_message(timeout=5) is not None:
                seen.append(await reader.version(GAME))
        return seen

    watching = asyncio.ensure_future(versions_seen_at_each_reply())
    for n, entry_id in enumerate(pending):
        await store.append_many([request(f"c{n}", n, entry_id, b"reply")])
    seen = await asyncio.wait_for(watching, timeout=10)
    await other.aclose()
    assert all(version >= n for n, version in enumerate(seen, start=1)), seen
