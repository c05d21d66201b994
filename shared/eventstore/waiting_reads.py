"""Blocking reads of several partition feeds on a Redis Cluster.

On one Redis a reader of several feeds sends one ``XREADGROUP ... BLOCK`` naming them all. On
a cluster every feed is its own hash slot and a command naming several slots is refused
(``CROSSSLOT``), so the reader here keeps one blocking ``XREADGROUP`` per feed in flight, each
on a connection of its own, across calls: a call waits until any of them answers (or its own
wait is over) and returns what every answered read brought; the reads still waiting stay in
flight for the next call, and a feed whose read answered is read again at the next call. An
idle reader costs a re-sent read per feed and per block, not a poll every few milliseconds,
and a busy one is woken by the feed that has work.

Nothing is lost between calls: what a read still in flight brings is kept until a call
collects it, and what a read cancelled at the end (`WaitingReads.close`) had taken is
pending in the group, as after a crash, for `autoclaim` to hand on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

IN_FLIGHT_BLOCK_MS = 1000
"""How long a read in flight waits on the server at least, whatever its call waits: a caller
that waits a few milliseconds at a time (the clock, before its next deadline) finds the reads
still in flight at its next call instead of sending them all again."""

_Read = tuple[str, str, str]
"""(group, consumer, feed key): one read in flight."""


class WaitingReads:
    """The reads in flight of every (group, consumer) of one client."""

    def __init__(self, redis: Any) -> None:
        self._redis = redis
        self._reads: dict[_Read, asyncio.Task[Any]] = {}

    async def read(
        self, group: str, consumer: str, keys: Mapping[str, int], count: int, block_ms: int
    ) -> list[Any]:
        """The replies of every read of ``keys`` that answered within ``block_ms`` (0: until
        one answers), each as redis-py gives an ``XREADGROUP`` reply (``None`` when its
        block ran out empty). A read sent now waits on the server ``block_ms``, at least
        `IN_FLIGHT_BLOCK_MS`. The error of a failed read is raised (and that read dropped,
        to be sent again by the next call); the others' replies wait for the next call."""
        waiting = [self._in_flight(group, consumer, key, count, block_ms) for key in keys]
        if not any(task.done() for task in waiting):
            timeout = block_ms / 1000 if block_ms else None
            await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        answered = {key: task for key, task in zip(keys, waiting, strict=True) if task.done()}
        failed = [key for key, task in answered.items() if task.cancelled() or task.exception()]
        for key in failed or answered:  # a failure drops only the failed reads
            del self._reads[(group, consumer, key)]
        if failed:
            answered[failed[0]].result()  # raises its error (or CancelledError)
        return [task.result() for task in answered.values()]

    def _in_flight(
        self, group: str, consumer: str, key: str, count: int, block_ms: int
    ) -> asyncio.Task[Any]:
        read = (group, consumer, key)
        task = self._reads.get(read)
        if task is None:
            block = block_ms and max(block_ms, IN_FLIGHT_BLOCK_MS)
            task = asyncio.ensure_future(
                self._redis.xreadgroup(group, consumer, {key: ">"}, count=count, block=block)
            )
            self._reads[read] = task
        return task

    async def close(self) -> None:
        """Cancel every read in flight (what they took stays pending in its group)."""
        reads, self._reads = list(self._reads.values()), {}
        for task in reads:
            task.cancel()
        for task in reads:
            with contextlib.suppress(BaseException):
                await task
