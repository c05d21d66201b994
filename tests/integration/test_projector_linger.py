"""A projector's linger (``RENATURE_PROJECTOR_LINGER_MS``): after a batch short of full it
waits before its next read, so that what comes meanwhile is read and written together, against
a real Redis. The read models are off the answer's path; the linger only makes them later."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
import redis.asyncio as aioredis

from eventstore import FeedEntry, RedisEventStore
from gameserver.projectors import BoardProjection, Projector
from renature.game import play
from support.projecting import append_batches, expected_board

pytestmark = pytest.mark.redis

LINGER_MS = 1_000
"""Long beside a round trip, so that the batches appended meanwhile come before the next read
even on a busy machine."""


@pytest.fixture
def store(redis: aioredis.Redis) -> RedisEventStore:
    return RedisEventStore(redis)


def counted(projector: Projector[Any]) -> list[int]:
    """The size of each batch the projector reads, as it handles them."""
    sizes: list[int] = []
    handle = projector.feeds.handle

    async def counting(entries: Sequence[FeedEntry]) -> None:
        sizes.append(len(entries))
        await handle(entries)

    projector.feeds.handle = counting
    return sizes


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def running(projector: Projector[Any]) -> AsyncIterator[asyncio.Event]:
    """The projector following its feeds until the block ends (or its ``stop`` is set)."""
    stop = asyncio.Event()
    task = asyncio.create_task(projector.run(stop, block_ms=100))
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=5)


async def test_what_comes_while_a_projector_lingers_is_one_read(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    events, _ = play(2, "linger", ["random", "random"], game_id="g-linger")
    starts = [i for i, ev in enumerate(events) if ev.cause is not None]
    projector = Projector(store, redis, BoardProjection(), "b1", batch=50, linger_ms=LINGER_MS)
    sizes = counted(projector)
    async with running(projector):
        await append_batches(store, "g-linger", events[: starts[2]])
        await until(lambda: sum(sizes) == starts[2])
        first_reads = len(sizes)
        for cut in starts[3:8]:  # five commands' events, each appended in a round trip of its own
            await append_batches(store, "g-linger", events[:cut])
        await until(lambda: sum(sizes) == starts[7])
        assert len(sizes) == first_reads + 1  # all five in the one read after the linger
        assert await projector.read_model("g-linger") == (
            starts[7],
            expected_board(events[: starts[7]]),
        )


async def test_a_full_batch_is_followed_by_a_read_at_once_and_stop_ends_a_linger(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    """A backlog is read batch after batch with no linger between full ones (a linger of a
    minute would otherwise hold it), and a projector stopped while it lingers stops with it."""
    events, _ = play(2, "backlog", ["random", "random"], game_id="g-backlog")
    await append_batches(store, "g-backlog", events)
    projector = Projector(store, redis, BoardProjection(), "b1", batch=5, linger_ms=60_000)
    sizes = counted(projector)
    started = time.monotonic()
    async with running(projector):
        await until(lambda: sum(sizes) == len(events))
        assert sizes[:-1] == [5] * (len(sizes) - 1)  # the last, short, batch is lingered after
        assert await projector.read_model("g-backlog") == (len(events), expected_board(events))
    assert time.monotonic() - started < 30  # the stop did not wait out the minute
