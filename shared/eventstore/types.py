"""Value types and errors of the event store.

Expected outcomes of an append (a conflict, a retried command) are values, not exceptions: they
are part of the normal protocol between the rules service and the store, and returning them
makes the caller handle each case (``match`` on the result). Exceptions are kept for real
failures (Redis unreachable, a malformed stream).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of a game as stored: its version, its opaque bytes and the batch meta.

    ``meta`` is only set on the first event of an appended batch (the command's provenance);
    it is ``None`` on every other event. ``hash`` is the event's chain hash as the appender
    stated it (``None`` for events appended without one).
    """

    version: int
    data: bytes
    meta: bytes | None = None
    hash: str | None = None


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One entry of a partition feed, as delivered to a projector."""

    partition: int
    entry_id: str
    game_id: str
    version: int
    data: bytes
    hash: str | None = None


def entries_by_partition(entries: Iterable[FeedEntry]) -> dict[int, list[str]]:
    """The ids of ``entries`` grouped by their partition feed, in order."""
    grouped: dict[int, list[str]] = {}
    for entry in entries:
        grouped.setdefault(entry.partition, []).append(entry.entry_id)
    return grouped


@dataclass(frozen=True, slots=True)
class Appended:
    """The batch was appended as versions ``first_version..last_version`` (inclusive)."""

    first_version: int
    last_version: int

    @property
    def count(self) -> int:
        """How many events the batch held."""
        return self.last_version - self.first_version + 1


@dataclass(frozen=True, slots=True)
class Conflict:
    """Nothing was written: the game is at ``actual``, not at the ``expected`` version, or at
    that version but ending in another event than the one the caller decided on.

    ``actual_hash`` is the hash of the stream's last event (``""`` for an empty stream, ``None``
    when unknown); it is left out of comparisons.
    """

    expected: int
    actual: int
    actual_hash: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Nothing was written: the command was handled before and this is its stored outcome."""

    outcome: bytes


AppendResult = Appended | Conflict | Duplicate


@dataclass(frozen=True, slots=True)
class Settlement:
    """What an append does besides, in the same atomic step and only once its events are
    appended (not on a conflict or a duplicate): the command's reply published on its channel
    and the command's own entry acknowledged in its stream's consumer group. Where the store
    can (`EventStore.settles_in_append`), this saves the appender two round trips and the
    reply leaves with the append's own fsync, never before it."""

    channel: str
    """The pub/sub channel the reply is published on."""
    message: bytes
    """The reply as its receiver reads it off the channel."""
    stream: str
    """The stream the command came in on."""
    group: str
    """The consumer group that read it."""
    entry_id: bytes | str
    """The command's entry in ``stream``."""


@dataclass(frozen=True, slots=True)
class AppendRequest:
    """One command's append, for `append_many` (the arguments of `append`)."""

    game_id: str
    command_id: str
    expected_version: int
    events: Sequence[bytes]
    outcome: bytes
    batch_meta: bytes | None = None
    prev_hash: str | None = None
    """The hash of the last event the command was decided on (``""`` for a new game): the
    append is refused as a `Conflict` unless the stream still ends in that very event.
    ``None``: the version alone is checked."""
    hashes: Sequence[str] | None = None
    """The chain hash of each event, stored with it (``None``: the events carry none)."""
    settlement: Settlement | None = None
    """The reply published and the command acknowledged with the append (only on a store
    that `settles_in_append`; ``None``: the appender does both itself)."""


class StoreError(Exception):
    """A real failure of the store (not a conflict or a duplicate, which are results)."""


class StoreUnavailableError(StoreError):
    """Redis could not be reached or did not answer in time.

    After this error from ``append`` the outcome is unknown: the batch may or may not have been
    written. Retrying with the *same* command id is safe: the store answers a command it has
    already applied with ``Duplicate``.
    """


class NotDurableError(StoreUnavailableError):
    """The write was made but not confirmed durable under the store's durability mode (too
    few replicas acknowledged it in time). Its outcome must not be reported as accepted;
    retrying with the same command id is safe and answers it once it is durable."""


class CorruptStreamError(StoreError):
    """A stream entry does not have the shape the store writes (foreign or damaged data)."""
