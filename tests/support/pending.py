"""A command left pending in the rules group, as by an instance that read it and died."""

from __future__ import annotations

import redis.asyncio as aioredis
from faststream.redis.parser.binary import BinaryMessageFormatV1

from gameserver.runtime import bus
from gameserver.runtime.bus import CommandEnvelope


async def left_pending(
    redis: aioredis.Redis, envelope: CommandEnvelope, stream: str, consumer: str
) -> None:
    """``envelope`` sent on ``stream`` and read there by ``consumer`` of the rules group, which
    then died without acknowledging it: pending, for another instance to take over."""
    message = await BinaryMessageFormatV1.encode(
        message=bus.encoder.encode(envelope),
        reply_to=None,
        headers=None,
        correlation_id=envelope.command_id,
    )
    await redis.xgroup_create(stream, bus.RULES_GROUP, id="0", mkstream=True)
    await redis.xadd(stream, {"__data__": message})
    assert await redis.xreadgroup(bus.RULES_GROUP, consumer, {stream: ">"})
