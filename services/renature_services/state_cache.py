"""One cache of folded games for every service: the rules service, the gateway, the projectors.

Each service keeps, per game, a value folded from the game's events (a `GameState`, or a
projection's fold) and reads only the events after the cached version, so a warm game costs one
short read. The cache never decides anything: a missing or evicted entry is rebuilt from the
stream, and an entry written by another instance is caught up on the next read.

An entry keeps the value, the version of the last event folded in *and* that event's chain hash
(``Event.hash``). The hash is the cache's lineage: the next event of the stream must name it as
its ``prev_hash``. `Cached.lineage` says whether a stream continues the cached entry, is behind
it, or differs from it (e.g. a store restored from an older backup), so a reader can tell a
cache to trust from one to drop. Readers read from `read_from` (the cached version minus one)
and fold with `checked_fold`: the first event read must be the cached last one, same version
and hash, or `StaleCache` says to drop the entry and replay the game (issue 11: after a power
cut lost the last second of writes, no service may keep deciding or serving on lost events).
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from renature import events as e
from renature.rules import evolve
from renature.state import GameState
from renature_store import EventStore, StoredEvent

F = TypeVar("F")

DEFAULT_MAX_GAMES = 10_000

Apply = Callable[[F | None, e.Event], F]
"""One step of a fold: the value after one more event (``None`` before the first)."""


class Lineage(enum.Enum):
    """How a game's stream relates to a cached entry."""

    CURRENT = "current"  # the stream ends at the cached event
    AHEAD = "ahead"  # the stream continues the cached entry with newer events
    BEHIND = "behind"  # the stream ends before the cached version (lost writes)
    DIVERGED = "diverged"  # the stream holds other events than those the cache folded


@dataclass(frozen=True, slots=True)
class Cached(Generic[F]):
    """A folded value with the version and the chain hash of the last event folded in."""

    value: F
    version: int
    last_hash: str

    def lineage(self, stream_version: int, next_event: e.Event | None = None) -> Lineage:
        """Compare with a stream at ``stream_version`` whose event after the cached version is
        ``next_event`` (when the stream is ahead). Without ``next_event`` an ahead stream is
        taken on trust; with it, its ``prev_hash`` must be the cached ``last_hash``."""
        if stream_version < self.version:
            return Lineage.BEHIND
        if stream_version == self.version:
            return Lineage.CURRENT
        if next_event is not None and (
            next_event.version != self.version + 1 or next_event.prev_hash != self.last_hash
        ):
            return Lineage.DIVERGED
        return Lineage.AHEAD


def fold(entry: Cached[F] | None, events: Iterable[e.Event], apply: Apply[F]) -> Cached[F] | None:
    """``entry`` with ``events`` folded in by ``apply`` (``None`` while nothing was folded)."""
    value = None if entry is None else entry.value
    version = 0 if entry is None else entry.version
    last_hash = "" if entry is None else entry.last_hash
    folded = False
    for event in events:
        value = apply(value, event)
        version, last_hash, folded = event.version, event.hash, True
    if not folded:
        return entry
    assert value is not None  # `apply` returns a value once an event was folded
    return Cached(value, version, last_hash)


def fold_stored(
    entry: Cached[F] | None, stored: Sequence[StoredEvent], apply: Apply[F]
) -> Cached[F] | None:
    """`fold` over events as the store returns them."""
    return fold(entry, (e.decode(event.data) for event in stored), apply)


def fold_states(
    entry: Cached[GameState] | None, stored: Sequence[StoredEvent]
) -> Cached[GameState] | None:
    """The game's state with the stored events folded in by the core's ``evolve``."""
    return fold_stored(entry, stored, evolve)


class StaleCache(Exception):
    """The stream does not continue a cached entry: it is behind it (events lost) or holds other
    events at its version (another history). The entry must be dropped and the game replayed."""

    def __init__(self, lineage: Lineage, message: str) -> None:
        super().__init__(message)
        self.lineage = lineage


def read_from(entry: Cached[F] | None) -> int:
    """Where to read a game's stream from to catch ``entry`` up *and* check its lineage: from
    the cached version minus one, so the read starts with the cached last event again."""
    return 0 if entry is None else entry.version - 1


def stored_hash(event: StoredEvent) -> str:
    """The chain hash of a stored event: as stored with it, else from its own bytes."""
    return event.hash if event.hash is not None else e.decode(event.data).hash


def checked_fold(
    entry: Cached[F] | None, stored: Sequence[StoredEvent], apply: Apply[F]
) -> Cached[F] | None:
    """``entry`` caught up with ``stored``, the events read from `read_from` (entry): the first
    must be the cached last event, same version and same hash, else `StaleCache` (the stream
    is behind the cache or another history: a regression after a lost write, a restore)."""
    if entry is None:
        return fold_stored(None, stored, apply)
    if not stored or stored[0].version != entry.version:
        raise StaleCache(
            Lineage.BEHIND,
            f"the stream has no event {entry.version} (cached); it is behind the cache",
        )
    if stored_hash(stored[0]) != entry.last_hash:
        raise StaleCache(
            Lineage.DIVERGED, f"event {entry.version} of the stream is not the cached one"
        )
    return fold_stored(entry, stored[1:], apply)


def cached_state(state: GameState) -> Cached[GameState]:
    """A state as a cache entry (its own version and last hash)."""
    return Cached(state, state.version, state.last_hash)


class StateCache(Generic[F]):
    """A bounded LRU of folded games: the newest entry of each game, the least recently used
    game dropped first."""

    def __init__(self, max_games: int = DEFAULT_MAX_GAMES) -> None:
        self.max_games = max_games
        self._entries: OrderedDict[str, Cached[F]] = OrderedDict()

    def get(self, game_id: str) -> Cached[F] | None:
        """The cached entry of a game, if any (no change to the LRU order)."""
        return self._entries.get(game_id)

    def value(self, game_id: str) -> F | None:
        """The cached value of a game, if any."""
        entry = self._entries.get(game_id)
        return None if entry is None else entry.value

    def version(self, game_id: str) -> int:
        """The cached version of a game: where to read its stream from (0 when not cached)."""
        entry = self._entries.get(game_id)
        return 0 if entry is None else entry.version

    def remember(self, game_id: str, entry: Cached[F]) -> None:
        """Cache ``entry`` unless a newer one is cached (concurrent reads may finish out of
        order), and mark the game as used most recently."""
        current = self._entries.get(game_id)
        if current is None or current.version <= entry.version:
            self._entries[game_id] = entry
        self._entries.move_to_end(game_id)
        while len(self._entries) > self.max_games:
            self._entries.popitem(last=False)

    def drop(self, game_id: str) -> None:
        """Forget a game's entry (its stream turned out to be behind it or another history)."""
        self._entries.pop(game_id, None)

    def clear(self) -> None:
        self._entries.clear()

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)


class GameLoader:
    """Games' latest states for a service: the cached fold caught up with the events read from
    `read_from` (its last event again), checked with `checked_fold`; a stale entry (the stream
    behind it or of another history) is dropped and the game replayed from its whole stream.
    The rules service and the gateway load games through one of these each."""

    def __init__(self, store: EventStore, max_games: int = DEFAULT_MAX_GAMES, log: Any = None):
        self.store = store
        self.cache: StateCache[GameState] = StateCache(max_games)
        self._log = log

    async def load(self, game_id: str) -> GameState | None:
        """The game's latest state (None when it has no events)."""
        cached = self.cache.get(game_id)
        stored = await self.store.read(game_id, after_version=read_from(cached))
        return await self._caught_up(game_id, cached, stored)

    async def load_many(self, game_ids: Sequence[str]) -> list[GameState | None]:
        """The latest states of several (distinct) games, read in one round trip."""
        cached = [self.cache.get(game_id) for game_id in game_ids]
        pages = await self.store.read_many(
            [(game_id, read_from(entry)) for game_id, entry in zip(game_ids, cached, strict=True)]
        )
        return [
            await self._caught_up(game_id, entry, page)
            for game_id, entry, page in zip(game_ids, cached, pages, strict=True)
        ]

    def remember(self, entry: Cached[GameState] | None) -> GameState | None:
        """Cache a game's state, unless a newer one is cached (by a concurrent command)."""
        if entry is None:
            return None
        self.cache.remember(entry.value.game_id, entry)
        return entry.value

    async def _caught_up(
        self, game_id: str, entry: Cached[GameState] | None, stored: Sequence[StoredEvent]
    ) -> GameState | None:
        try:
            return self.remember(checked_fold(entry, stored, evolve))
        except StaleCache as stale:  # never decide or serve on events the stream lost
            if self._log is not None:
                self._log.warning("state_cache_stale", game_id=game_id, reason=str(stale))
            self.cache.drop(game_id)
            return self.remember(fold_states(None, await self.store.read(game_id)))
