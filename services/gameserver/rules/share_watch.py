"""A rules instance on its share of the command streams (``RENATURE_RULES_PARTITIONS=K/N``)
reads another share's streams while that share's instance is gone (`runtime.orphans`): an
adopted stream is read by its `CommandReader` too, and what the gone consumer had read and never
answered is claimed (``XAUTOCLAIM``) and handled. On a Redis Cluster each stream is read by a
FastStream subscriber made at start-up, and streams are not adopted: a share's instance that is
down holds its games until it is back.
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis

from eventstore.redis_values import text
from gameserver.rules.command_reader import CommandReader, Reading, sender_streams
from gameserver.runtime import bus
from gameserver.runtime.orphans import OrphanWatch
from gameserver.runtime.settings import Settings


def watch_shares(
    settings: Settings, redis: Redis, reading: Reading, partitions: Sequence[int]
) -> OrphanWatch | None:
    """A running `OrphanWatch` of the command streams outside ``partitions`` (the instance's
    share) for ``reading``'s reader, or None where it reads them all."""
    others = sorted(set(range(settings.commands.count)) - set(partitions))
    if not others:
        return None
    streams = {s: sender for sender, some in sender_streams(settings, others).items() for s in some}
    consumers = settings.consumers
    reader = reading.reader

    async def adopt(stream: str) -> None:
        reader.adopt(stream, streams[stream])
        await claim(redis, reader, stream, consumers.reclaim_idle_ms)

    watch = OrphanWatch(
        redis,
        bus.RULES_GROUP,
        consumers.consumer,
        consumers.reclaim_idle_ms,
        list(streams),
        adopt,
        reader.release,
    )
    return watch.start()


async def claim(redis: Redis, reader: CommandReader, stream: str, idle_ms: int) -> None:
    """What a gone consumer read of ``stream`` and never acknowledged, handed to ``reader`` as
    its own."""
    start = "0-0"
    while True:
        reply = await redis.xautoclaim(
            stream, bus.RULES_GROUP, reader.consumer, idle_ms, start, count=256
        )
        start, entries = text(reply[0]), reply[1]
        reader.take(stream, entries)
        if start == "0-0" or not entries:
            return
