"""One consumer of the partition feeds, shared by every service that follows them.

The projectors and the clock service read the same feeds with a consumer group of their own
and need the same protocol around their own work: create the groups (from the start, so a new
consumer sees every game), take over what a dead instance left pending, follow the feeds,
acknowledge what was handled, and heal when Redis goes away (wait and retry; create the groups
again when Redis comes back empty and answers ``NOGROUP``). Nothing is lost meanwhile: an
entry that was not acknowledged stays pending and is handled again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence

from redis.exceptions import RedisError

from eventstore import FeedEntry, RedisEventStore, StoreError
from eventstore.keys import format_partitions
from gameserver.runtime.logging import Logger
from gameserver.runtime.service_runner import pause

RETRY_SECONDS = 0.2
"""Pause between tries while Redis is unreachable: back within a second of its return."""

Handler = Callable[[Sequence[FeedEntry]], Awaitable[None]]
"""Handles a batch of entries and acknowledges those it is done with (`FeedConsumer.ack`)."""


class FeedConsumer:
    """Reads the partition feeds for one consumer group and hands each batch to ``handle``."""

    def __init__(
        self,
        store: RedisEventStore,
        group: str,
        consumer: str,
        handle: Handler,
        *,
        partitions: Sequence[int] | None = None,
        batch: int = 200,
        reclaim_idle_ms: int = 30_000,
        linger_ms: int = 0,
        log: Logger,
    ) -> None:
        self.store = store
        self.group = group
        self.consumer = consumer
        self.handle = handle
        self.partitions = tuple(store.partitions() if partitions is None else partitions)
        """The feeds this instance reads (instances may split the partitions between them)."""
        self.batch = batch
        self.reclaim_idle_ms = reclaim_idle_ms
        self.linger_s = linger_ms / 1000
        """After a batch short of full, the pause before the next read, so that entries gather
        and one read (and one wake-up) takes several moves: for a consumer whose work no answer
        waits for (the projectors), never the clock's."""
        self.log = log

    def adopt(self, partition: int) -> None:
        """Read ``partition``'s feed too from the next read on (`orphans.OrphanWatch`)."""
        self.partitions = tuple(sorted({*self.partitions, partition}))

    def release(self, partition: int) -> None:
        """Read ``partition``'s feed no more."""
        self.partitions = tuple(p for p in self.partitions if p != partition)

    async def setup(self) -> None:
        """Create the group on every feed, from the start so a new consumer sees everything."""
        for partition in self.store.partitions():
            await self.store.ensure_group(partition, self.group, start_id="0")

    async def poll(self, block_ms: int | None = None) -> int:
        """Read and handle one batch of new entries; returns how many were read."""
        entries = await self.store.read_group(
            self.group, self.consumer, self.partitions, count=self.batch, block_ms=block_ms
        )
        await self.handle(entries)
        return len(entries)

    async def reclaim(self, min_idle_ms: int | None = None) -> int:
        """Take over and handle entries pending too long with a (probably dead) consumer."""
        idle = self.reclaim_idle_ms if min_idle_ms is None else min_idle_ms
        total = 0
        for partition in self.partitions:
            while True:
                claimed = await self.store.autoclaim(
                    partition, self.group, self.consumer, idle, count=self.batch
                )
                if claimed:
                    self.log.info("entries_reclaimed", partition=partition, count=len(claimed))
                    await self.handle(claimed)
                    total += len(claimed)
                if len(claimed) < self.batch:
                    break
        return total

    async def ack(self, entries: Iterable[FeedEntry]) -> None:
        """Acknowledge handled entries: one round trip whatever the partitions."""
        await self.store.ack_entries(self.group, entries)

    async def run(
        self,
        stop: asyncio.Event,
        *,
        block_ms: int = 1000,
        reclaim_every: float = 10.0,
        before_poll: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        """Follow the feeds until ``stop`` is set, healing whenever Redis goes away.

        ``before_poll`` (the clock's timer) runs before every read and returns how long that
        read may block, in milliseconds."""
        try:
            await self._follow(stop, block_ms, reclaim_every, before_poll)
        finally:
            await self.store.close_reads()  # a cluster's reads left in flight
        self.log.info("consumer_stopped", group=self.group)

    async def _follow(
        self,
        stop: asyncio.Event,
        block_ms: int,
        reclaim_every: float,
        before_poll: Callable[[], Awaitable[int]] | None,
    ) -> None:
        ready = False
        last_reclaim = time.monotonic()
        while not stop.is_set():
            try:
                if not ready:
                    await self.setup()
                    await self.reclaim()
                    last_reclaim = time.monotonic()
                    ready = True
                    self.log.info(
                        "consumer_started",
                        group=self.group,
                        partitions=format_partitions(self.partitions),
                    )
                block = block_ms if before_poll is None else await before_poll()
                read = await self.poll(block_ms=block)
                if self.linger_s and 0 < read < self.batch:
                    await pause(stop, self.linger_s)
                if time.monotonic() - last_reclaim >= reclaim_every:
                    await self.reclaim()
                    last_reclaim = time.monotonic()
            except (StoreError, RedisError, OSError) as error:
                if "NOGROUP" in str(error):
                    ready = False  # Redis lost its data: create the groups again
                self.log.warning("redis_unavailable", error=str(error))
                await pause(stop, RETRY_SECONDS)
