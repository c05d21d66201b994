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
and hash, or `StaleCache` says to drop the entry and replay the game (after a power
cut lost the last second of writes, no service may keep deciding or serving on lost events).
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import msgspec

from eventstore import EventStore, StoredEvent
from gameplatform import game_names, get_game, registry
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.runtime.logging import Logger

F = TypeVar("F")

DEFAULT_MAX_GAMES = 10_000
DEFAULT_GAME = registry.DEFAULT_GAME
"""The game of a stream whose first batch names none (every stream written before the platform
hosted a second game)."""

Apply = Callable[[HostedGame, F | None, Event], F]
"""One step of a fold: the value after one more event of the game (``None`` before the first)."""


class StreamGame(msgspec.Struct):
    """The part of a batch's provenance (``BatchMeta``) that names the stream's game: the meta
    of a game's first event says which game the stream holds, once, for every reader."""

    game: str = DEFAULT_GAME


class _Hashed(msgspec.Struct):
    hash: str = ""


_stream_game = msgspec.json.Decoder(StreamGame)
_hashed = msgspec.json.Decoder(_Hashed)


def game_named_in(meta: bytes | None) -> str:
    """The game a batch's meta names (`StreamGame`): the stream's game when it is the meta of
    its first event; the default game for a meta without one or none at all."""
    if not meta:
        return DEFAULT_GAME
    try:
        return _stream_game.decode(meta).game
    except (msgspec.DecodeError, msgspec.ValidationError):
        return DEFAULT_GAME


def game_of_stream(stored: Sequence[StoredEvent]) -> HostedGame:
    """The game of a stream read from its first event (events read from version 1)."""
    first = stored[0] if stored else None
    return get_game(game_named_in(first.meta if first is not None else None))


def game_reading(first_event: bytes) -> HostedGame | None:
    """The one hosted game whose decoder reads a stream's first event (a creation), or None
    when not exactly one does. For readers that hold the first event without its meta (a
    projector's feed entry): the meta names the same game, at the cost of another read."""
    readers = []
    for name in game_names():
        game = get_game(name)
        try:
            game.decode_event(first_event)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue
        readers.append(game)
    return readers[0] if len(readers) == 1 else None


def evolve_state(game: HostedGame, state: HostedState | None, event: Event) -> HostedState:
    """The fold of the rules service and the gateway: the game's own ``evolve``."""
    return game.evolve(state, event)


class Lineage(enum.Enum):
    """How a game's stream relates to a cached entry."""

    CURRENT = "current"  # the stream ends at the cached event
    AHEAD = "ahead"  # the stream continues the cached entry with newer events
    BEHIND = "behind"  # the stream ends before the cached version (lost writes)
    DIVERGED = "diverged"  # the stream holds other events than those the cache folded


@dataclass(frozen=True, slots=True)
class Cached(Generic[F]):
    """A folded value with the version and the chain hash of the last event folded in, and the
    name of the game whose events they are."""

    value: F
    version: int
    last_hash: str
    game: str = DEFAULT_GAME

    @property
    def adapter(self) -> HostedGame:
        """The game's adapter (`gameplatform.get_game`)."""
        return get_game(self.game)

    def lineage(self, stream_version: int, next_event: Event | None = None) -> Lineage:
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


def seat_name(entry: Cached[HostedState] | None, seat: int | None) -> str | None:
    """How ``seat`` is named in the cached game (its colour as the game names it: what the
    players see), for log lines; None without a seat or a cached state."""
    if entry is None or seat is None:
        return None
    colours = entry.adapter.table(entry.value).colours
    return colours[seat] if 0 <= seat < len(colours) else None


def fold(
    entry: Cached[F] | None, events: Iterable[Event], apply: Apply[F], game: HostedGame
) -> Cached[F] | None:
    """``entry`` with ``events`` of ``game`` folded in by ``apply`` (``None`` while nothing was
    folded)."""
    value = None if entry is None else entry.value
    version = 0 if entry is None else entry.version
    last_hash = "" if entry is None else entry.last_hash
    folded = False
    for event in events:
        value = apply(game, value, event)
        version, last_hash, folded = event.version, event.hash, True
    if not folded:
        return entry
    assert value is not None  # `apply` returns a value once an event was folded
    return Cached(value, version, last_hash, game.name)


def fold_stored(
    entry: Cached[F] | None, stored: Sequence[StoredEvent], apply: Apply[F]
) -> Cached[F] | None:
    """`fold` over events as the store returns them, decoded by the entry's game (or, for a
    new entry, the game the stream's first event names)."""
    game = entry.adapter if entry is not None else game_of_stream(stored)
    return fold(entry, (game.decode_event(event.data) for event in stored), apply, game)


def fold_states(
    entry: Cached[HostedState] | None, stored: Sequence[StoredEvent]
) -> Cached[HostedState] | None:
    """The game's state with the stored events folded in by the game's ``evolve``."""
    return fold_stored(entry, stored, evolve_state)


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
    return event.hash if event.hash is not None else _hashed.decode(event.data).hash


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


def cached_state(state: HostedState, game: str = DEFAULT_GAME) -> Cached[HostedState]:
    """A game's state as a cache entry (its own version and last hash)."""
    return Cached(state, state.version, state.last_hash, game)


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

    def __init__(
        self, store: EventStore, max_games: int = DEFAULT_MAX_GAMES, log: Logger | None = None
    ) -> None:
        self.store = store
        self.cache: StateCache[HostedState] = StateCache(max_games)
        self._log = log

    async def load(self, game_id: str) -> HostedState | None:
        """The game's latest state (None when it has no events)."""
        entry = await self.load_entry(game_id)
        return None if entry is None else entry.value

    async def load_entry(self, game_id: str) -> Cached[HostedState] | None:
        """The game's latest state with its game and version (None when it has no events)."""
        cached = self.cache.get(game_id)
        stored = await self.store.read(game_id, after_version=read_from(cached))
        return await self._caught_up(game_id, cached, stored)

    async def load_many(self, game_ids: Sequence[str]) -> list[Cached[HostedState] | None]:
        """The latest states of several (distinct) games, read in one round trip."""
        cached = [self.cache.get(game_id) for game_id in game_ids]
        pages = await self.store.read_many(
            [(game_id, read_from(entry)) for game_id, entry in zip(game_ids, cached, strict=True)]
        )
        return [
            await self._caught_up(game_id, entry, page)
            for game_id, entry, page in zip(game_ids, cached, pages, strict=True)
        ]

    def remember(self, entry: Cached[HostedState] | None) -> Cached[HostedState] | None:
        """Cache a game's state, unless a newer one is cached (by a concurrent command)."""
        if entry is None:
            return None
        self.cache.remember(entry.value.game_id, entry)
        return entry

    async def _caught_up(
        self, game_id: str, entry: Cached[HostedState] | None, stored: Sequence[StoredEvent]
    ) -> Cached[HostedState] | None:
        try:
            return self.remember(checked_fold(entry, stored, evolve_state))
        except StaleCache as stale:  # never decide or serve on events the stream lost
            if self._log is not None:
                self._log.warning("state_cache_stale", game_id=game_id, reason=str(stale))
            self.cache.drop(game_id)
            return self.remember(fold_states(None, await self.store.read(game_id)))
