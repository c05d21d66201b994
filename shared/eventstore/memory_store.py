"""An in-memory event store: the `EventStore` contract without Redis, for fast tests.

It keeps the same promises as `RedisEventStore` (see docs/event-store.md): versions 1..n per
game, conditional and idempotent appends, hash-linked appends (a batch whose ``prev_hash`` is
not the stored last hash is a `Conflict`), each event stored with its hash, batch meta on a
batch's first event, one feed per partition with consumer groups, pending entries and
autoclaim. It passes the same contract
suite (tests/integration/test_store_contract.py), so a unit test that uses it exercises the
behaviour the services get from Redis.

What it does not do: survive the process, share state between processes, expire outcomes (a
test process does not live for the Redis store's week-long outcome TTL), or have durability
modes (nothing is durable here). Every method runs
without awaiting between its checks and its writes, so on one event loop each append is atomic,
as the Lua script makes it on Redis.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from eventstore.keys import DEFAULT_PARTITIONS, DEFAULT_PREFIX, KeyLayout
from eventstore.redis_store import MAX_VERSION
from eventstore.types import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    Duplicate,
    FeedEntry,
    StoredEvent,
    StoreError,
    entries_by_partition,
)


@dataclass(slots=True)
class _Pending:
    """A feed entry delivered to a consumer and not acknowledged yet."""

    consumer: str
    delivered_at: float


@dataclass(slots=True)
class _Group:
    """A consumer group on one feed: how far it has read, and what it has not acknowledged."""

    next_index: int
    pending: dict[int, _Pending] = field(default_factory=dict)  # by index into the feed


# long: the whole EventStore contract in memory, method for method beside RedisEventStore
class MemoryEventStore:
    """Event store held in dictionaries; one instance is one store (nothing is global)."""

    def __init__(
        self, *, prefix: str = DEFAULT_PREFIX, partitions: int = DEFAULT_PARTITIONS
    ) -> None:
        """``prefix`` only shapes `feed_key`; ``partitions`` is the layout's, as on Redis."""
        self.layout = KeyLayout(prefix=prefix, partitions=partitions)
        self._streams: dict[str, list[StoredEvent]] = {}
        self._outcomes: dict[tuple[str, str], bytes] = {}
        self._feeds: list[list[FeedEntry]] = [[] for _ in range(partitions)]
        self._groups: dict[tuple[int, str], _Group] = {}
        self._feed_changed: asyncio.Condition | None = None  # made on first use, on its loop
        self.waiting_reads = 0
        """Group reads waiting for a new entry now (as Redis' ``blocked_clients``)."""

    # -- layout ------------------------------------------------------------------------------

    def partition_of(self, game_id: str) -> int:
        """The partition of a game, the same as the Redis store's for the same layout."""
        return self.layout.partition_of(game_id)

    def partitions(self) -> range:
        """All partition numbers."""
        return range(self.layout.partitions)

    def feed_key(self, partition: int) -> str:
        """The name the Redis store would give the partition feed (checked the same way)."""
        return self.layout.feed_key(partition)

    @property
    def settles_in_append(self) -> bool:
        """No: this store has no channels and no command streams (`Settlement`)."""
        return False

    # -- writing -----------------------------------------------------------------------------

    async def append(
        self,
        game_id: str,
        *,
        command_id: str,
        expected_version: int,
        events: Sequence[bytes],
        outcome: bytes,
        batch_meta: bytes | None = None,
    ) -> AppendResult:
        """Append the batch if the game is at ``expected_version`` (see `RedisEventStore`)."""
        request = AppendRequest(game_id, command_id, expected_version, events, outcome, batch_meta)
        _check_request(self.layout, request)
        result = self._apply(request)
        await self._notify(result)
        return result

    async def append_many(self, requests: Sequence[AppendRequest]) -> list[AppendResult]:
        """Each request appended in order as `append` would; all are checked before any write."""
        for request in requests:
            _check_request(self.layout, request)
        results = [self._apply(request) for request in requests]
        for result in results:
            await self._notify(result)
        return results

    def _apply(self, request: AppendRequest) -> AppendResult:
        """Idempotency, then the version and the last hash, then the writes (the script's
        order). ``prev_hash`` is checked against a new game ("") and against a last event
        stored with a hash; an event stored without one cannot be checked, as on Redis."""
        game_id = request.game_id
        previous = self._outcomes.get((game_id, request.command_id))
        if previous is not None:
            return Duplicate(previous)
        stream = self._streams.get(game_id, [])
        # The last stored hash: "" for a new game, None when the last event was stored without.
        last_hash = stream[-1].hash if stream else ""
        if len(stream) != request.expected_version:
            return Conflict(request.expected_version, len(stream), last_hash or "")
        checked = request.prev_hash is not None and last_hash is not None
        if checked and last_hash != request.prev_hash:  # the same count, another history
            return Conflict(request.expected_version, len(stream), last_hash)
        stream = self._streams.setdefault(game_id, stream)
        partition = self.layout.partition_of(game_id)
        feed = self._feeds[partition]
        first = len(stream) + 1
        hashes: Sequence[str | None] = request.hashes or [None] * len(request.events)
        for i, (data, event_hash) in enumerate(zip(request.events, hashes, strict=True)):
            version = len(stream) + 1
            meta = request.batch_meta if i == 0 else None
            stream.append(StoredEvent(version, data, meta, event_hash))
            entry_id = _entry_id(len(feed) + 1)
            feed.append(FeedEntry(partition, entry_id, game_id, version, data, event_hash))
        self._outcomes[game_id, request.command_id] = request.outcome
        return Appended(first_version=first, last_version=len(stream))

    async def _notify(self, result: AppendResult) -> None:
        """Wake readers blocked in `read_group` after a batch reached a feed."""
        if isinstance(result, Appended) and self._feed_changed is not None:
            async with self._feed_changed:
                self._feed_changed.notify_all()

    async def record_outcome(
        self, game_id: str, command_id: str, outcome: bytes
    ) -> Duplicate | None:
        """Record the outcome of a command that appended nothing; the first writer wins."""
        self.layout.command_key(game_id, command_id)  # the same checks as the Redis keys
        previous = self._outcomes.get((game_id, command_id))
        if previous is not None:
            return Duplicate(previous)
        self._outcomes[game_id, command_id] = outcome
        return None

    async def get_outcome(self, game_id: str, command_id: str) -> bytes | None:
        """The stored outcome of a command, or ``None``."""
        self.layout.command_key(game_id, command_id)
        return self._outcomes.get((game_id, command_id))

    # -- reading -----------------------------------------------------------------------------

    async def read(
        self, game_id: str, after_version: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The events after ``after_version`` in order, at most ``limit`` of them."""
        if after_version < 0:
            raise ValueError(f"after_version must not be negative, got {after_version}")
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        events = self._stream(game_id)[after_version:]
        if after_version >= MAX_VERSION:
            return []
        return events if limit is None else events[:limit]

    async def read_many(self, requests: Sequence[tuple[str, int]]) -> list[list[StoredEvent]]:
        """`read` for several ``(game_id, after_version)`` pairs."""
        for _, after_version in requests:
            if after_version < 0:
                raise ValueError(f"after_version must not be negative, got {after_version}")
        return [await self.read(game_id, after) for game_id, after in requests]

    async def version(self, game_id: str) -> int:
        """The game's current version (0 for a new game)."""
        return len(self._stream(game_id))

    async def last(self, game_id: str) -> StoredEvent | None:
        """The game's last event (None for a game without events)."""
        stream = self._stream(game_id)
        return stream[-1] if stream else None

    async def exists(self, game_id: str) -> bool:
        """Whether the game has at least one event."""
        return bool(self._stream(game_id))

    def _stream(self, game_id: str) -> list[StoredEvent]:
        """The events of a game (none for a new one); an invalid id is refused as on Redis."""
        self.layout.partition_of(game_id)
        return self._streams.get(game_id, [])

    async def list_games(self, partition: int | None = None) -> list[str]:
        """The ids of all games (of one partition, or of all), sorted."""
        return sorted(
            game
            for game in self._streams
            if partition is None or self.layout.partition_of(game) == partition
        )

    # -- partition feeds ---------------------------------------------------------------------

    async def ensure_group(self, partition: int, group: str, start_id: str = "0") -> bool:
        """Create a consumer group on a feed; True if it was created, False if it existed.

        ``start_id`` is ``"0"`` (the whole history), ``"$"`` (only what comes next) or an entry
        id (what comes after it), as for XGROUP CREATE.
        """
        self.layout.feed_key(partition)  # checks the partition
        if (partition, group) in self._groups:
            return False
        feed = self._feeds[partition]
        if start_id == "$":
            start = len(feed)
        else:
            after = _id_key(start_id)
            start = sum(1 for entry in feed if _id_key(entry.entry_id) <= after)
        self._groups[partition, group] = _Group(next_index=start)
        return True

    async def read_group(
        self,
        group: str,
        consumer: str,
        partitions: Iterable[int],
        count: int = 100,
        block_ms: int | None = None,
    ) -> list[FeedEntry]:
        """New entries of several feeds for ``consumer``, now pending until acknowledged.

        ``block_ms`` waits that long for a first entry (0: without end, as XREADGROUP BLOCK 0).
        """
        chosen = list(dict.fromkeys(partitions))
        found = self._deliver(group, consumer, chosen, count)
        if found or block_ms is None or not chosen:
            return found
        if self._feed_changed is None:
            self._feed_changed = asyncio.Condition()
        timeout = None if block_ms == 0 else block_ms / 1000
        async with self._feed_changed:
            self.waiting_reads += 1
            try:
                await asyncio.wait_for(
                    self._feed_changed.wait_for(lambda: self._has_new(group, chosen)), timeout
                )
            except TimeoutError:
                return []
            finally:
                self.waiting_reads -= 1
        return self._deliver(group, consumer, chosen, count)

    def _group(self, partition: int, group: str) -> _Group:
        found = self._groups.get((partition, group))
        if found is None:
            raise StoreError(
                f"NOGROUP No such key '{self.feed_key(partition)}' or consumer group '{group}'"
            )
        return found

    def _has_new(self, group: str, partitions: Sequence[int]) -> bool:
        return any(self._group(p, group).next_index < len(self._feeds[p]) for p in partitions)

    def _deliver(
        self, group: str, consumer: str, partitions: Sequence[int], count: int
    ) -> list[FeedEntry]:
        groups = [(p, self._group(p, group)) for p in partitions]  # all checked before reading
        now = time.monotonic()
        delivered: list[FeedEntry] = []
        for p, state in groups:
            feed = self._feeds[p]
            end = min(len(feed), state.next_index + count)
            for index in range(state.next_index, end):
                state.pending[index] = _Pending(consumer, now)
                delivered.append(feed[index])
            state.next_index = end
        return delivered

    async def ack_entries(self, group: str, entries: Iterable[FeedEntry]) -> int:
        """Acknowledge entries of any partitions; returns how many were pending."""
        by_partition = entries_by_partition(entries)
        return sum([await self.ack(p, group, ids) for p, ids in by_partition.items()])

    async def ack(self, partition: int, group: str, entry_ids: Iterable[str]) -> int:
        """Acknowledge processed entries; returns how many of them were pending."""
        state = self._groups.get((partition, group))
        if state is None:
            return 0
        acked = 0
        for entry_id in set(entry_ids):
            if state.pending.pop(_index_of(entry_id), None) is not None:
                acked += 1
        return acked

    async def autoclaim(
        self, partition: int, group: str, consumer: str, min_idle_ms: int, count: int = 100
    ) -> list[FeedEntry]:
        """Take over up to ``count`` entries pending longer than ``min_idle_ms``, oldest first."""
        state = self._group(partition, group)
        now = time.monotonic()
        idle = [
            index
            for index, pending in sorted(state.pending.items())
            if (now - pending.delivered_at) * 1000 >= min_idle_ms
        ][:count]
        for index in idle:
            state.pending[index] = _Pending(consumer, now)
        return [self._feeds[partition][index] for index in idle]


def _check_request(layout: KeyLayout, request: AppendRequest) -> None:
    """The input checks of `RedisEventStore`, in its order and with its messages."""
    events = request.events
    if isinstance(events, bytes | str) or not events:
        raise ValueError("append needs a non-empty sequence of events (use record_outcome)")
    for event in events:
        if not isinstance(event, bytes):
            raise TypeError(f"events must be bytes, got {type(event).__name__}")
    if request.expected_version < 0:
        raise ValueError(f"expected version must not be negative, got {request.expected_version}")
    if request.hashes is not None and len(request.hashes) != len(events):
        raise ValueError(f"{len(request.hashes)} hashes for {len(events)} events: one per event")
    layout.command_key(request.game_id, request.command_id)  # game id and command id
    if request.settlement is not None:
        raise ValueError("this store does not settle in its appends (settles_in_append)")


def _entry_id(position: int) -> str:
    """The id of the feed entry at 1-based ``position`` (Redis ids have the same shape)."""
    return f"{position}-0"


def _index_of(entry_id: str) -> int:
    """The list index of a feed entry with this id (-1 for an id this store never gave)."""
    ms, _, seq = entry_id.partition("-")
    if not ms.isdigit() or seq != "0":
        return -1
    return int(ms) - 1


def _id_key(entry_id: str) -> tuple[int, int]:
    """An entry id as a comparable pair; ``"0"`` is the id before every entry."""
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        raise StoreError(f"invalid stream entry id {entry_id!r}") from None
