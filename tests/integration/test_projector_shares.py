"""Projectors on their shares of the feeds (``RENATURE_PROJECTOR_PARTITIONS=K/N``) against a
real Redis: a share whose projector is gone is projected by another once its entries have waited
the reclaim idle time (`runtime.orphans`), and when the share's own projector comes, both keep
every model right."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from devkit.waiting import eventually
from eventstore import RedisEventStore
from gameserver.projectors import board_and_score
from gameserver.projectors.projector_runner import serve
from gameserver.projectors.read_models import ReadModels
from gameserver.runtime.bus import MODELS_GROUP
from gameserver.runtime.settings import Settings
from renature.game import play
from support.projecting import append_batches, expected_board

pytestmark = pytest.mark.redis


@contextlib.asynccontextmanager
async def projecting(settings: Settings) -> AsyncIterator[None]:
    """``renature serve models`` on ``settings``, in this event loop, until the block ends."""
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, board_and_score(), stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


async def board_version(models: ReadModels, game_id: str, version: int) -> None:
    async def written() -> bool:
        model = await models.read(game_id)
        return model is not None and model[0] >= version

    await eventually(written, f"the board model of {game_id} at {version}", timeout=10)


async def idle(redis: aioredis.Redis, feed: str) -> dict[str, bool]:
    """Which consumers of the models' group on ``feed`` were handed nothing for a second."""
    consumers = await redis.xinfo_consumers(feed, MODELS_GROUP)
    return {c["name"].decode(): int(c["idle"]) > 1000 for c in consumers}


async def test_a_gone_shares_feed_is_projected_by_another_until_its_own_comes(
    redis: aioredis.Redis, redis_url: str
) -> None:
    store = RedisEventStore(redis)
    odd = next(f"odd-{n}" for n in range(100) if store.partition_of(f"odd-{n}") % 2)
    events, _ = play(2, odd, ["random"] * 2, game_id=odd)
    starts = [n for n, event in enumerate(events) if event.cause is not None]  # commands' first
    first, second = starts[3], starts[8]
    feed = store.feed_key(store.partition_of(odd))
    base = Settings.of(redis_url=redis_url, reclaim_idle_ms=300, projector_linger_ms=0)
    models = ReadModels(redis, store.layout, "board", "score")
    async with projecting(base.with_(consumer="models-even", projector_partitions="0/2")):
        await append_batches(store, odd, events[:first])  # nobody reads the odd feeds
        await board_version(models, odd, first)
        async with projecting(base.with_(consumer="models-odd", projector_partitions="1/2")):
            await append_batches(store, odd, events[:second])
            await board_version(models, odd, second)
            appended = second
            for cut in starts[9:]:  # moves go on until only the odd projector is handed them
                if await idle(redis, feed) == {"models-even": True, "models-odd": False}:
                    break
                await append_batches(store, odd, events[:cut])
                appended = cut
                await asyncio.sleep(0.1)
            assert await idle(redis, feed) == {"models-even": True, "models-odd": False}
            await board_version(models, odd, appended)
    assert await models.read(odd) == (appended, expected_board(events[:appended]))
    pending = await redis.xpending(feed, MODELS_GROUP)
    assert pending["pending"] == 0
