"""The contract every event store back end fulfils.

The rules service, the projectors and the contract tests depend on this protocol rather than on
`RedisEventStore`, so another back end (an in-memory one for fast tests, another database) can
be run through the same contract suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from eventstore.types import AppendRequest, AppendResult, Duplicate, FeedEntry, StoredEvent


class EventStore(Protocol):
    """Append-only, per-game event streams plus partition feeds for projectors."""

    def partition_of(self, game_id: str) -> int: ...

    def partitions(self) -> range: ...

    def feed_key(self, partition: int) -> str: ...

    @property
    def settles_in_append(self) -> bool:
        """Whether an `AppendRequest` may carry a `Settlement` (its reply published and its
        command acknowledged in the append's own step)."""
        ...

    async def append(
        self,
        game_id: str,
        *,
        command_id: str,
        expected_version: int,
        events: Sequence[bytes],
        outcome: bytes,
        batch_meta: bytes | None = None,
    ) -> AppendResult: ...

    async def append_many(self, requests: Sequence[AppendRequest]) -> list[AppendResult]: ...

    async def record_outcome(
        self, game_id: str, command_id: str, outcome: bytes
    ) -> Duplicate | None: ...

    async def get_outcome(self, game_id: str, command_id: str) -> bytes | None: ...

    async def read(
        self, game_id: str, after_version: int = 0, limit: int | None = None
    ) -> list[StoredEvent]: ...

    async def read_many(self, requests: Sequence[tuple[str, int]]) -> list[list[StoredEvent]]: ...

    async def version(self, game_id: str) -> int: ...

    async def last(self, game_id: str) -> StoredEvent | None:
        """The game's last event (None for a game without events), read alone."""
        ...

    async def exists(self, game_id: str) -> bool: ...

    async def list_games(self, partition: int | None = None) -> list[str]: ...

    async def ensure_group(self, partition: int, group: str, start_id: str = "0") -> bool: ...

    async def read_group(
        self,
        group: str,
        consumer: str,
        partitions: Iterable[int],
        count: int = 100,
        block_ms: int | None = None,
    ) -> list[FeedEntry]: ...

    async def ack(self, partition: int, group: str, entry_ids: Iterable[str]) -> int: ...

    async def ack_entries(self, group: str, entries: Iterable[FeedEntry]) -> int:
        """Acknowledge entries of any partitions at once; returns how many were pending."""
        ...

    async def autoclaim(
        self, partition: int, group: str, consumer: str, min_idle_ms: int, count: int = 100
    ) -> list[FeedEntry]: ...
