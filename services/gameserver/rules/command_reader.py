"""Every command stream of a rules instance read with one ``XREADGROUP`` (one Redis).

FastStream reads one stream per subscriber: with four command partitions a lightly loaded
instance got four small batches where one would do, each woken, read, decided, appended and
acknowledged on its own (the issue's "split batches"). On one Redis this reader asks for every
stream the instance is assigned in one call and hands what came back, all streams of one
sender together, to the handler as one batch.

A game's commands all go to one stream, and a stream's entries are handled in their order: a
stream with a batch in flight takes no part in the next one; what is read for it meanwhile waits
in memory (delivered to this consumer, so pending in the group) until that batch is done, and
then goes at once. Streams with nothing in flight go on concurrently, so under load as many
batches run together as the instance has streams, as with one subscriber each. A batch whose
handler fails stays pending (nothing acknowledged) and the reclaiming subscribers
(``XAUTOCLAIM``) take it over, as before. A Redis Cluster keeps one subscriber per stream: its
streams live in different slots, which one command may not span.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from faststream.redis import BinaryMessageFormatV1
from redis.asyncio import Redis
from redis.exceptions import RedisError

from eventstore.lanes import Lanes
from eventstore.redis_client import redis_client
from eventstore.redis_values import RawEntry, group_read, stream_reply, text
from gameserver.runtime import bus, healing
from gameserver.runtime.logging import get_logger
from gameserver.runtime.settings import Settings

log = get_logger("renature.rules")

MAX_BATCH = 256
"""Envelopes read per stream and ``XREADGROUP`` and handled together. Reading at most this many
at a time leaves the rest of the queue to the other instances of the group."""

READ_BLOCK_MS = 1_000
"""How long one ``XREADGROUP`` waits for commands (a command ends the wait at once).
FastStream's default, 100 ms, made 16 idle subscribers cost 1.6 % of a core; 1 s costs 0.6 %."""

BACKOFF_S = healing.RECONNECT_BACKOFF_SECONDS
"""The wait after a read that failed (Redis gone: read again soon after it answers)."""

STOP_GRACE_S = 5.0
"""How long a stopping reader lets the batches in flight finish. One still running then (its
Redis frozen: a command waits on a socket with no timeout) is cancelled and stays pending, for
the reclaiming subscribers of this or another instance, as after a crash; an unbounded wait
left a stopping service, and a test's teardown, waiting as long as the server stayed frozen."""

STUCK_READ_S = 2.0
"""How long `Reading.stop` waits, past the grace, for a reader whose cancellation did not end
its read, before it closes the reader's connections under that read and cancels it again (and
as long again after). A cancellation can be lost inside the client library: the suite once
waited for ever on a cancelled reader still reading an ``XREADGROUP BLOCK 100`` that the server
never answered."""


@dataclass
class CommandBatch:
    """Envelopes of one sender read together, from one stream or several: for each, its stream
    and entry id (what acknowledges it), its headers (``reply_to``, ``correlation_id``) and its
    body (the envelope's JSON)."""

    entries: list[tuple[str, str]] = field(default_factory=list)
    headers: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def add(self, stream: str, entry_id: str, data: bytes) -> None:
        body, headers = BinaryMessageFormatV1.parse(data)
        self.entries.append((stream, entry_id))
        self.headers.append(headers)
        self.bodies.append(body)

    def __len__(self) -> int:
        return len(self.bodies)


Handle = Callable[[CommandBatch, str], Awaitable[None]]
"""What handles a batch of one sender (the batch, the sender)."""


class CommandReader:
    """Reads ``senders``' streams (stream -> sender) as the group's ``consumer`` and hands the
    batches to ``handle`` (see the module)."""

    def __init__(
        self,
        redis: Redis,
        senders: Mapping[str, str],
        consumer: str,
        handle: Handle,
        recreate: Callable[[], Awaitable[None]],
        *,
        max_batch: int = MAX_BATCH,
        block_ms: int = READ_BLOCK_MS,
        grace_s: float = STOP_GRACE_S,
    ) -> None:
        self.redis = redis
        self.lanes = Lanes(redis)
        self.senders = dict(senders)
        self.consumer = consumer
        self.handle = handle
        self.recreate = recreate
        self.max_batch = max_batch
        self.block_ms = block_ms
        self.grace_s = grace_s
        self.held: dict[str, list[tuple[str, bytes]]] = {stream: [] for stream in senders}
        """Entries read for each stream and not handed over yet (its batch is in flight)."""
        self.released: set[str] = set()
        """Streams read no more (`release`): what was read of them is still handed over."""
        self.busy: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.given_up = False
        """Set once the batches still in flight are given up: nothing more is handed over."""
        self.closing = False
        """Set by `Reading.stop`: no read after the one in progress."""
        self._progress = asyncio.Event()

    async def run(self) -> None:
        """Read until cancelled; then finish the batches in flight and those they held back
        (read already: left pending, they would wait for a reclaim), for `STOP_GRACE_S` at
        most (`_finish`)."""
        try:
            while not self.closing:
                if self._held_count() >= self.max_batch * len(self.senders):
                    self._progress.clear()  # enough waiting: read again once a batch is done
                    await self._progress.wait()
                    continue
                for stream, entries in await self._read():
                    self._hold(text(stream), entries)
                self._dispatch()
        finally:
            await self._finish()

    async def _finish(self) -> None:
        """Wait for the batches in flight (and those they hand over as they end) for
        ``grace_s``; cancel what still runs then (left pending)."""
        deadline = asyncio.get_running_loop().time() + self.grace_s
        while self.tasks:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            await asyncio.wait(set(self.tasks), timeout=left)
        if self.tasks:
            self.given_up = True
            log.warning("command_batches_abandoned", batches=len(self.tasks), grace_s=self.grace_s)
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def adopt(self, stream: str, sender: str) -> None:
        """Read ``stream`` (of ``sender``) too from the next read on (`share_watch`)."""
        self.senders[stream] = sender
        self.held.setdefault(stream, [])
        self.released.discard(stream)

    def release(self, stream: str) -> None:
        """Read ``stream`` no more; what was read of it still goes to the handler."""
        self.released.add(stream)

    def take(self, stream: str, entries: list[RawEntry]) -> None:
        """Handle ``entries`` of an adopted ``stream``, claimed from a gone consumer."""
        self._hold(stream, entries)
        self._dispatch()

    def _hold(self, stream: str, entries: list[RawEntry]) -> None:
        self.held[stream].extend(
            (text(entry_id), cast(bytes, fields.get(b"__data__", b"")))  # a bytes client
            for entry_id, fields in entries
            if fields is not None  # an entry deleted meanwhile
        )

    async def _read(self) -> list[tuple[bytes | str, list[RawEntry]]]:
        """``(stream, [(entry id, fields), ...])`` for each stream that had entries."""
        reading = (stream for stream in self.senders if stream not in self.released)
        try:
            read = await self.lanes.one(
                *group_read(bus.RULES_GROUP, self.consumer, reading, self.max_batch, self.block_ms)
            )
            return list(stream_reply(read))
        except RedisError as error:
            if healing.is_nogroup(error):  # Redis came back empty: the groups again
                log.warning("consumer_group_missing", error=str(error))
                with contextlib.suppress(RedisError, OSError):
                    await self.recreate()
            else:
                log.warning("command_read_failed", error=str(error))
            await asyncio.sleep(BACKOFF_S)
            return []

    def _held_count(self) -> int:
        return sum(len(entries) for entries in self.held.values())

    def _dispatch(self) -> None:
        """One batch per sender of every stream with entries and no batch in flight."""
        if self.given_up:
            return
        batches: dict[str, tuple[CommandBatch, list[str]]] = {}
        for stream, entries in self.held.items():
            if not entries or stream in self.busy:
                continue
            batch, streams = batches.setdefault(self.senders[stream], (CommandBatch(), []))
            for entry_id, data in entries:
                batch.add(stream, entry_id, data)
            streams.append(stream)
            self.held[stream] = []
        for sender, (batch, streams) in batches.items():
            self.busy.update(streams)
            task = asyncio.create_task(self._handle(batch, sender, streams))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _handle(self, batch: CommandBatch, sender: str, streams: list[str]) -> None:
        try:
            await self.handle(batch, sender)
        except Exception:  # left pending: the reclaiming subscribers take it over
            log.exception("command_batch_failed", commands=len(batch), streams=streams)
        finally:
            self.busy.difference_update(streams)
            self._progress.set()
            self._dispatch()


@dataclass
class Reading:
    """A `CommandReader` running on a client of its own, until `stop`."""

    task: asyncio.Task[None]
    redis: Redis
    reader: CommandReader

    @classmethod
    def start(cls, url: str, reader: Callable[[Redis], CommandReader]) -> Reading:
        """Run ``reader`` (given its client) on a client of ``url`` whose reads block (``XREADGROUP
        BLOCK``): no socket timeout may cut them (`healing.BLOCKING_READ_OPTIONS`). The reader
        alone uses it, one call at a time: it keeps its one connection (no pool to take it
        from and give it back to on every read, about 40 us of CPU a read)."""
        redis = redis_client(url, single_connection_client=True, **healing.BLOCKING_READ_OPTIONS)
        running = reader(redis)
        return cls(asyncio.create_task(running.run()), redis, running)

    async def stop(self) -> None:
        """Stop reading; the batches in flight (and those they held back) are finished first,
        within the reader's grace. Bounded: a read the cancellation did not end is ended by
        closing its connection (`STUCK_READ_S`)."""
        self.reader.closing = True
        self.task.cancel()
        await asyncio.wait({self.task}, timeout=self.reader.grace_s + STUCK_READ_S)
        if not self.task.done():
            log.warning("command_read_stuck", waited_s=self.reader.grace_s + STUCK_READ_S)
            await self.redis.connection_pool.disconnect()
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=STUCK_READ_S)
        if self.task.done():
            with contextlib.suppress(asyncio.CancelledError):
                if error := self.task.exception():
                    log.error("command_reader_failed", error=repr(error))
        else:
            log.error("command_reader_left_running")
        await self.redis.aclose()


def sender_streams(settings: Settings, partitions: Sequence[int]) -> dict[str, list[str]]:
    """The command streams of ``partitions`` of each sender (`bus.SENDERS`)."""
    commands = settings.commands
    return {s: bus.streams_of(commands, s).streams(partitions) for s in bus.SENDERS}
