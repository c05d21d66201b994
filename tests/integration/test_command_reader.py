"""The rules service's `CommandReader` against a real Redis: every command stream of an
instance read at once, one batch per sender, a stream's entries handled in their order (held
back while its batch is in flight), a lost group created again, a failed batch left pending,
a stopping reader finishing its batches in flight, within its grace."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from faststream.redis import BinaryMessageFormatV1

from devkit.waiting import eventually
from gameserver.rules.command_reader import CommandBatch, CommandReader, Reading
from gameserver.runtime import bus, healing

pytestmark = pytest.mark.redis

GATEWAY_STREAMS = ("rn:{p00}:commands", "rn:{p01}:commands", "rn:{p02}:commands")
CLOCK_STREAM = "rn:{p00}:commands:clock"
SENDERS = {**dict.fromkeys(GATEWAY_STREAMS, bus.GATEWAY), CLOCK_STREAM: bus.CLOCK}


async def send(redis: aioredis.Redis, stream: str, body: str) -> None:
    data = await BinaryMessageFormatV1.encode(
        message=body.encode(), reply_to=None, headers={"x": body}, correlation_id=body
    )
    await redis.xadd(stream, {"__data__": data})


async def groups(redis: aioredis.Redis) -> None:
    for stream in SENDERS:
        await healing.ensure_stream_group(redis, stream, bus.RULES_GROUP)


async def pending(redis: aioredis.Redis, stream: str) -> int:
    return int((await redis.xpending(stream, bus.RULES_GROUP))["pending"])


class Recorder:
    """Records each batch; holds it while ``gate`` is closed; acknowledges it when done."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self.batches: list[tuple[str, list[str], list[str]]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = False

    async def __call__(self, batch: CommandBatch, sender: str) -> None:
        streams = [stream for stream, _ in batch.entries]
        self.batches.append((sender, streams, [body.decode() for body in batch.bodies]))
        assert [h["x"] for h in batch.headers] == [body.decode() for body in batch.bodies]
        await self.gate.wait()
        if self.fail:
            raise RuntimeError("the handler failed")
        for stream, entry_id in batch.entries:
            await self.redis.xack(stream, bus.RULES_GROUP, entry_id)


async def in_flight_and_held(
    redis: aioredis.Redis, recorder: Recorder, stream: str, *held: str
) -> None:
    """``a1`` in flight on ``stream`` (its handler waits while the gate is closed), then
    ``held`` sent, read meanwhile and held back."""
    await send(redis, stream, "a1")
    await eventually(lambda: len(recorder.batches) == 1, "the first batch")
    for body in held:
        await send(redis, stream, body)
    await asyncio.sleep(0.3)


@contextlib.asynccontextmanager
async def reading(
    redis: aioredis.Redis,
    recorder: Recorder,
    grace_s: float = 5.0,
    kind: type[CommandReader] = CommandReader,
    block_ms: int = 100,
) -> AsyncIterator[CommandReader]:
    """A reader of ``kind`` on a client of its own, as the rules service runs it (`Reading`),
    stopped as the service stops it."""

    async def recreate() -> None:
        await groups(redis)

    where = redis.connection_pool.connection_kwargs
    running = Reading.start(
        f"redis://{where['host']}:{where['port']}/0",
        lambda own: kind(
            own, SENDERS, "rules-1", recorder, recreate, block_ms=block_ms, grace_s=grace_s
        ),
    )
    try:
        yield running.reader
    finally:
        await running.stop()


async def test_the_streams_of_one_sender_read_together_are_one_batch(
    redis: aioredis.Redis,
) -> None:
    await groups(redis)
    for n, stream in enumerate(GATEWAY_STREAMS):
        await send(redis, stream, f"move-{n}")
    await send(redis, CLOCK_STREAM, "timeout")
    recorder = Recorder(redis)
    async with reading(redis, recorder):
        await eventually(lambda: len(recorder.batches) == 2, "two batches")
    by_sender = {sender: (streams, bodies) for sender, streams, bodies in recorder.batches}
    assert by_sender[bus.GATEWAY] == (list(GATEWAY_STREAMS), ["move-0", "move-1", "move-2"])
    assert by_sender[bus.CLOCK] == ([CLOCK_STREAM], ["timeout"])
    for stream in SENDERS:
        assert await pending(redis, stream) == 0


async def test_a_stream_with_a_batch_in_flight_waits_and_keeps_its_order(
    redis: aioredis.Redis,
) -> None:
    """A game's commands are all on one stream: while that stream's batch is in flight, what is
    read for it waits and then goes, in its order; the other streams go on meanwhile."""
    await groups(redis)
    first, second, _ = GATEWAY_STREAMS
    recorder = Recorder(redis)
    recorder.gate.clear()
    async with reading(redis, recorder):
        await in_flight_and_held(redis, recorder, first, "a2", "a3")
        assert len(recorder.batches) == 1
        await send(redis, second, "b1")
        await eventually(lambda: len(recorder.batches) == 2, "the other stream's batch")
        assert recorder.batches[1][1:] == ([second], ["b1"])
        recorder.gate.set()
        await eventually(lambda: len(recorder.batches) == 3, "the held entries")
    assert recorder.batches[2][1:] == ([first, first], ["a2", "a3"])
    assert await pending(redis, first) == 0


async def test_a_lost_group_is_created_again_and_a_failed_batch_stays_pending(
    redis: aioredis.Redis,
) -> None:
    recorder = Recorder(redis)
    async with reading(redis, recorder):  # no group yet (Redis came back empty): made again

        async def grouped() -> bool:
            with contextlib.suppress(aioredis.ResponseError):  # no stream yet
                return bool(await redis.xinfo_groups(GATEWAY_STREAMS[2]))
            return False

        await eventually(grouped, "the group made again")
        recorder.fail = True
        await send(redis, GATEWAY_STREAMS[2], "lost")
        await eventually(lambda: len(recorder.batches) == 1, "the batch")
        await asyncio.sleep(0.1)
    assert await pending(redis, GATEWAY_STREAMS[2]) == 1  # for the reclaiming subscriber


async def test_a_stopping_reader_finishes_the_batch_in_flight_and_what_it_held_back(
    redis: aioredis.Redis,
) -> None:
    await groups(redis)
    first = GATEWAY_STREAMS[0]
    recorder = Recorder(redis)
    recorder.gate.clear()
    async with reading(redis, recorder):
        await in_flight_and_held(redis, recorder, first, "a2")
        asyncio.get_running_loop().call_later(0.5, recorder.gate.set)
    assert [bodies for _, _, bodies in recorder.batches] == [["a1"], ["a2"]]
    assert await pending(redis, first) == 0


async def test_a_batch_that_outlasts_the_grace_is_given_up_and_stays_pending(
    redis: aioredis.Redis,
) -> None:
    """A handler stuck (its Redis frozen) does not hold a stopping service: after the grace it
    is cancelled, what it held back is not handed over, and both stay pending for a reclaim."""
    await groups(redis)
    first = GATEWAY_STREAMS[0]
    recorder = Recorder(redis)
    recorder.gate.clear()  # never opened
    loop = asyncio.get_running_loop()
    async with reading(redis, recorder, grace_s=0.5):
        await in_flight_and_held(redis, recorder, first, "a2")
        stopping = loop.time()
    assert loop.time() - stopping < 3.0
    assert len(recorder.batches) == 1
    assert await pending(redis, first) == 2


class LosesItsCancellation(CommandReader):
    """A reader whose cancellation is lost inside a read (as one was in the client library)
    and that reads on, blocking for ever (``block_ms=0``)."""

    async def _read(self) -> list[tuple[bytes | str, list[Any]]]:
        try:
            return await super()._read()
        except asyncio.CancelledError:
            return await super()._read()


async def test_a_read_the_cancellation_does_not_end_is_ended_by_closing_its_connection(
    redis: aioredis.Redis,
) -> None:
    await groups(redis)
    loop = asyncio.get_running_loop()
    async with reading(
        redis, Recorder(redis), grace_s=0.2, kind=LosesItsCancellation, block_ms=0
    ) as reader:
        await asyncio.sleep(0.3)  # blocked in its first read
        stopping = loop.time()
    assert reader.closing
    assert loop.time() - stopping < 0.2 + 2 * 2.0 + 2.0  # grace, stuck read twice, backoff
