"""The cost of each durability mode: appends through the event store on a private
Redis configured for the mode, one writer (latency) and 16 concurrent writers (throughput).

``everysec``   appendonly yes, appendfsync everysec (the loss window: about a second)
``always``     appendonly yes, appendfsync always (fsync before every reply)
``replica``    a primary (appendfsync everysec) and one replica; every write waits for the
               replica (WAIT, or WAITAOF on Redis 7.2+) before it counts as done

The figures depend on the disk's fsync latency above all: a laptop SSD, a cloud volume and a
tmpfs differ by orders of magnitude. Run ``python -m bench --only durability``.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from devkit.redis_server import RedisServer
from eventstore import AppendRequest, RedisEventStore

EVENT = b'{"type":"PiecesPlaced","version":0,"seat":1,"x":10,"y":12,"rotation":90}' * 4
SEQUENTIAL = 400
CONCURRENT_WRITERS = 16
PER_WRITER = 100
ONE_WRITER = 300
"""Writes of one writer in each half of `write_cost`."""


async def _one_writer(write: Callable[[int], Awaitable[object]], count: int) -> list[float]:
    """The round trips (ms, sorted) of ``count`` writes of one writer, each awaited before the
    next (``write(i)`` makes the i-th)."""
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        await write(i)
        latencies.append((time.perf_counter() - started) * 1000)
    return sorted(latencies)


async def _measure(store: RedisEventStore) -> tuple[float, float, float]:
    """p50 and p99 of one writer's appends (ms), and appends/s of 16 concurrent writers."""

    def append(i: int) -> Awaitable[object]:
        return store.append_many([AppendRequest("bench-seq", f"c{i}", i, [EVENT], b"ok")])

    latencies = await _one_writer(append, SEQUENTIAL)

    async def writer(number: int) -> None:
        for i in range(PER_WRITER):
            request = AppendRequest(f"bench-{number}", f"c{i}", i, [EVENT], b"ok")
            await store.append_many([request])

    started = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(CONCURRENT_WRITERS)))
    rate = CONCURRENT_WRITERS * PER_WRITER / (time.perf_counter() - started)
    return statistics.median(latencies), latencies[int(len(latencies) * 0.99)], rate


async def _mode(mode: str) -> tuple[float, float, float]:
    fsync = "always" if mode == "always" else "everysec"
    with RedisServer(appendonly=True, appendfsync=fsync) as primary:
        client = aioredis.Redis.from_url(primary.url)
        try:
            if mode != "replica":
                return await _measure(RedisEventStore(client, durability=mode))
            with RedisServer() as replica:
                follower = aioredis.Redis.from_url(replica.url)
                try:
                    await follower.replicaof("127.0.0.1", primary.port)
                    for _ in range(200):
                        info = await follower.info("replication")
                        if info.get("master_link_status") == "up":
                            break
                        await asyncio.sleep(0.05)
                    return await _measure(RedisEventStore(client, durability="replica"))
                finally:
                    await follower.aclose()
        finally:
            await client.aclose()


async def _one_writer_p50(url: str) -> float:
    """p50 ms of one writer's ``XADD``s of a move's event, each awaited before the next."""
    client = aioredis.Redis.from_url(url)
    try:
        await client.ping()

        def add(_: int) -> Awaitable[object]:
            return client.xadd("bench-writes", {"event": EVENT}, maxlen=1000, approximate=True)

        return statistics.median(await _one_writer(add, ONE_WRITER))
    finally:
        await client.aclose()


def write_cost() -> tuple[float, float]:
    """What this machine's disk adds to a durable write: p50 ms of one writer's round trip on a
    Redis of its own with ``appendfsync always`` (answered once the write is on the disk, as
    the services' Redis in `make bench`) and with ``appendfsync no`` (the AOF left to the
    system), each measured twice, alternated, in the same few seconds. A move's way through
    the services waits for two such writes one after the other: its command's, which the rules
    service is handed only once it is synced, and its events'."""
    halves: dict[str, list[float]] = {"always": [], "no": []}
    for fsync in ("always", "no", "always", "no"):
        with RedisServer(appendonly=True, appendfsync=fsync) as server:
            halves[fsync].append(asyncio.run(_one_writer_p50(server.url)))
    return statistics.mean(halves["always"]), statistics.mean(halves["no"])


def run() -> None:
    print("\n== durability modes: appends through the event store (one event each) ==")
    print(f"{'mode':<10} {'p50 ms':>8} {'p99 ms':>8} {'appends/s (16 writers)':>24}")
    for mode in ("everysec", "always", "replica"):
        p50, p99, rate = asyncio.run(_mode(mode))
        print(f"{mode:<10} {p50:>8.2f} {p99:>8.2f} {rate:>24.0f}")
    print("(fsync latency of this machine's disk decides the cost of always; replica: WAIT)")


if __name__ == "__main__":
    run()
