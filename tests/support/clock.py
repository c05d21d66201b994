"""The real clock service for a test, running in the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameserver.clock.clock_service import ClockService
from gameserver.runtime import bus
from gameserver.runtime.bus import COMMAND_PARTITIONS
from gameserver.runtime.rules_client import RulesClient

CLOCK_STREAMS = bus.streams_of(COMMAND_PARTITIONS, bus.CLOCK)
"""The command streams the clock service writes to (its ACL user's own)."""


@contextlib.asynccontextmanager
async def clock_service(redis: aioredis.Redis, consumer: str) -> AsyncIterator[ClockService]:
    """A clock service running in this event loop until the block ends."""
    client = RulesClient(redis, streams=CLOCK_STREAMS)
    service = ClockService(redis, RedisEventStore(redis), client, consumer)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        yield service
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await client.aclose()
