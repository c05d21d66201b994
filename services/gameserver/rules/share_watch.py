"""A rules instance on its share of the command streams (``RENATURE_RULES_PARTITIONS=K/N``)
keeps an eye on the other shares' streams, and reads one whose instance is gone.

With shares, each stream is read by one instance alone: while that instance is down its games'
commands would wait for it. Every ``every_s`` the watch asks Redis, for each stream outside the
share, whether the group has left a command undelivered, or delivered and unacknowledged,
for longer than ``orphan_after_ms`` (the consumers' reclaim idle time, 4 s by default: well
under the gateway's 10 s). Such a stream is *adopted*: the `CommandReader` reads it too, and
what its gone consumer had read and never answered is claimed (``XAUTOCLAIM``) and handled.
Once another consumer is handed its entries again (the share's instance, back under a new
name), the stream is *released*: read no more here. A stream that was never given a group
(its instance never started) gets one from its start, as its instance would have made.

Deciding a game's commands on two instances is safe (the conditional append: the second to
decide on a state finds it moved and decides again), so a slow instance taken for a gone one
costs a little CPU, never a fork. On a Redis Cluster each stream is read by a FastStream
subscriber made at start-up, and streams are not adopted: a share's instance that is down
holds its games until it is back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from eventstore.redis_values import text
from gameserver.rules.command_reader import CommandReader, Reading, sender_streams
from gameserver.runtime import bus, healing
from gameserver.runtime.logging import get_logger
from gameserver.runtime.settings import Settings

log = get_logger("renature.rules")


@dataclass
class ShareWatch:
    """Adopts and releases the streams of ``foreign`` (stream -> sender) for ``reader``."""

    redis: Redis
    reader: CommandReader
    foreign: dict[str, str]
    consumer: str
    orphan_after_ms: int
    adopted: set[str] = field(default_factory=set)

    @property
    def every_s(self) -> float:
        """How often the streams are looked at: a quarter of the orphan time, at most 1 s."""
        return max(0.02, min(1.0, self.orphan_after_ms / 4000))

    async def run(self) -> None:
        """Look at the streams until cancelled; a Redis that fails is tried again later."""
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self.check()
            except (RedisError, OSError) as error:
                log.warning("share_watch_failed", error=str(error))

    async def check(self) -> None:
        seconds, micros = await self.redis.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        for stream, sender in self.foreign.items():
            if stream in self.adopted:
                if await self._owner_back(stream):
                    self.reader.release(stream)
                    self.adopted.discard(stream)
                    log.info("share_released", stream=stream)
            elif await self._orphaned(stream, now_ms):
                self.reader.adopt(stream, sender)
                self.adopted.add(stream)
                log.warning("share_adopted", stream=stream, after_ms=self.orphan_after_ms)
                await self._claim(stream)

    async def _orphaned(self, stream: str, now_ms: int) -> bool:
        """Whether ``stream`` holds a command undelivered, or delivered and not acknowledged,
        for longer than the orphan time."""
        group = await self._group(stream)
        if group is None:
            return False
        undelivered = await self.redis.xrange(
            stream, f"({text(group['last-delivered-id'])}", "+", count=1
        )
        oldest = undelivered[0][0] if undelivered else None
        if oldest is not None and now_ms - _ms(oldest) > self.orphan_after_ms:
            return True
        stale = await self.redis.xpending_range(
            stream, bus.RULES_GROUP, "-", "+", 1, idle=self.orphan_after_ms
        )
        return bool(stale)

    async def _group(self, stream: str) -> dict[str, Any] | None:
        """The rules group's entry of ``stream`` (made from the start where the stream holds
        commands and nobody made it), or None where the stream holds nothing."""
        try:
            groups = await self.redis.xinfo_groups(stream)
        except ResponseError:  # no such stream: nothing was ever sent on it
            return None
        found = [g for g in groups if text(g["name"]) == bus.RULES_GROUP]
        if found:
            return dict(found[0])
        if await healing.ensure_stream_group(self.redis, stream, bus.RULES_GROUP):
            log.warning("consumer_group_created", group=bus.RULES_GROUP, stream=stream)
        return {"last-delivered-id": "0-0"}

    async def _owner_back(self, stream: str) -> bool:
        """Whether another consumer was handed entries of ``stream`` (or, on Redis 7.2 and
        later, asked for them) within the orphan time."""
        consumers = await self.redis.xinfo_consumers(stream, bus.RULES_GROUP)
        return any(
            text(c["name"]) != self.consumer and int(c["idle"]) < self.orphan_after_ms
            for c in consumers
        )

    async def _claim(self, stream: str) -> None:
        """What a gone consumer read of ``stream`` and never acknowledged, handed to the
        reader as this consumer's."""
        start = "0-0"
        while True:
            reply = await self.redis.xautoclaim(
                stream, bus.RULES_GROUP, self.consumer, self.orphan_after_ms, start, count=256
            )
            start, entries = text(reply[0]), reply[1]
            self.reader.take(stream, entries)
            if start == "0-0" or not entries:
                return


def watch_shares(
    settings: Settings, redis: Redis, reading: Reading, partitions: Sequence[int]
) -> asyncio.Task[None] | None:
    """A running `ShareWatch` of ``reading``'s reader over the command streams outside
    ``partitions`` (the instance's share), or None where it reads them all."""
    others = sorted(set(range(settings.commands.count)) - set(partitions))
    if not others:
        return None
    streams = {s: sender for sender, some in sender_streams(settings, others).items() for s in some}
    consumers = settings.consumers
    watch = ShareWatch(
        redis, reading.reader, streams, consumers.consumer, consumers.reclaim_idle_ms
    )
    return asyncio.create_task(watch.run())


def _ms(entry_id: bytes | str) -> int:
    """The milliseconds part of a stream entry id (when Redis added it)."""
    return int(text(entry_id).partition("-")[0])
