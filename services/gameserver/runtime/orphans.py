"""Streams of another share whose reader is gone, read here until it is back.

With shares (``K/N``: `gameserver.runtime.shares`), each stream of a consumer group is read by
one instance alone: while that instance is down, what is sent on its streams would wait for it.
Every instance on a share runs an `OrphanWatch` over the other shares' streams: every
``every_s`` it asks Redis, for each of them, whether the group has left an entry undelivered, or
delivered and unacknowledged, for longer than ``orphan_after_ms`` (the consumers' reclaim idle
time, 4 s by default: well under the gateway's 10 s). Such a stream is *adopted* (``adopt``: the
instance reads it too, and takes over what the gone consumer had read); once another consumer is
handed its entries again (the share's instance, back under a new name), it is *released*
(``release``: read no more here). A stream that was never given the group (its instance never
started) gets it from its start, as its instance would have made it. Reading a stream on two
instances for a while is safe for every reader of the platform: the rules service appends
conditionally, the projectors write each model only forward.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from eventstore.redis_values import text
from gameserver.runtime import healing
from gameserver.runtime.logging import get_logger

log = get_logger("renature.shares")


@dataclass
class OrphanWatch:
    """Adopts and releases the streams ``keys`` of ``group`` for ``consumer``."""

    redis: Redis
    group: str
    consumer: str
    orphan_after_ms: int
    keys: Sequence[str]
    adopt: Callable[[str], Awaitable[None]]
    release: Callable[[str], None]
    adopted: set[str] = field(default_factory=set)
    task: asyncio.Task[None] | None = None

    @property
    def every_s(self) -> float:
        """How often the streams are looked at: a quarter of the orphan time, at most 1 s."""
        return max(0.02, min(1.0, self.orphan_after_ms / 4000))

    def start(self) -> OrphanWatch:
        """Run the watch in the background (until `stop`)."""
        self.task = asyncio.create_task(self.run())
        return self

    async def stop(self) -> None:
        """Stop watching; what was adopted stays with its reader until that stops too."""
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def run(self) -> None:
        """Look at the streams until cancelled; a Redis that fails is tried again later."""
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self.check()
            except (RedisError, OSError) as error:
                log.warning("share_watch_failed", group=self.group, error=str(error))

    async def check(self) -> None:
        seconds, micros = await self.redis.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        for key in self.keys:
            if key in self.adopted:
                if await self._owner_back(key):
                    self.release(key)
                    self.adopted.discard(key)
                    log.info("share_released", group=self.group, stream=key)
            elif await self._orphaned(key, now_ms):
                self.adopted.add(key)
                log.warning(
                    "share_adopted", group=self.group, stream=key, after_ms=self.orphan_after_ms
                )
                await self.adopt(key)

    async def _orphaned(self, key: str, now_ms: int) -> bool:
        """Whether ``key`` holds an entry undelivered, or delivered and not acknowledged, for
        longer than the orphan time."""
        group = await self._group(key)
        if group is None:
            return False
        undelivered = await self.redis.xrange(
            key, f"({text(group['last-delivered-id'])}", "+", count=1
        )
        oldest = undelivered[0][0] if undelivered else None
        if oldest is not None and now_ms - _ms(oldest) > self.orphan_after_ms:
            return True
        stale = await self.redis.xpending_range(
            key, self.group, "-", "+", 1, idle=self.orphan_after_ms
        )
        return bool(stale)

    async def _group(self, key: str) -> dict[str, Any] | None:
        """The group's entry of ``key`` (made from the start where the stream holds entries
        and nobody made it), or None where the stream holds nothing."""
        try:
            groups = await self.redis.xinfo_groups(key)
        except ResponseError:  # no such stream: nothing was ever sent on it
            return None
        found = [g for g in groups if text(g["name"]) == self.group]
        if found:
            return dict(found[0])
        if await healing.ensure_stream_group(self.redis, key, self.group):
            log.warning("consumer_group_created", group=self.group, stream=key)
        return {"last-delivered-id": "0-0"}

    async def _owner_back(self, key: str) -> bool:
        """Whether another consumer was handed entries of ``key`` (or, on Redis 7.2 and later,
        asked for them) within the orphan time."""
        consumers = await self.redis.xinfo_consumers(key, self.group)
        return any(
            text(c["name"]) != self.consumer and int(c["idle"]) < self.orphan_after_ms
            for c in consumers
        )


def _ms(entry_id: bytes | str) -> int:
    """The milliseconds part of a stream entry id (when Redis added it)."""
    return int(text(entry_id).partition("-")[0])
