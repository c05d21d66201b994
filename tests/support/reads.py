"""Whether a feed reader has begun to wait: what a test waits for before it appends the entry
that must wake the reader, rather than sleeping and hoping the read has begun."""

from __future__ import annotations

from typing import Any

from eventstore import EventStore, RedisEventStore
from eventstore.memory_store import MemoryEventStore
from eventstore.redis_client import is_cluster


async def _info(redis: Any, section: str) -> list[dict[str, Any]]:
    """An ``INFO`` section of the server, or of every master of a cluster."""
    if is_cluster(redis):
        found = await redis.info(section, target_nodes=redis.PRIMARIES)
        return [info for info in found.values() if isinstance(info, dict)]
    return [await redis.info(section)]


async def blocked_reads(store: EventStore) -> int:
    """Group reads that wait for an entry now: the server's blocked clients (every master's on
    a cluster), the memory store's waiting reads."""
    if isinstance(store, MemoryEventStore):
        return store.waiting_reads
    assert isinstance(store, RedisEventStore)
    clients = await _info(store._redis, "clients")  # the store's own connection pool
    return sum(int(info.get("blocked_clients", 0)) for info in clients)


async def group_reads(redis: Any) -> int:
    """``XREADGROUP`` commands the server (every master of a cluster) has taken so far."""
    stats = await _info(redis, "commandstats")
    return sum(int(info.get("cmdstat_xreadgroup", {}).get("calls", 0)) for info in stats)
