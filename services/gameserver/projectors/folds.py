"""The per-game folds of one projection: cached, caught up from the game's stream when behind,
and replayed from the whole stream when the cache or a stored model is not on the stream's
history (lost writes, a restore)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from eventstore import FeedEntry, RedisEventStore
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.runtime.logging import Logger
from gameserver.runtime.state_cache import (
    Cached,
    StaleCache,
    StateCache,
    checked_fold,
    fold,
    fold_stored,
    game_reading,
    read_from,
    stored_hash,
)

F = TypeVar("F")


class Folding(Protocol[F]):
    """A fold over a game's events (what `Folds` caches and catches up)."""

    def apply(self, game: HostedGame, fold: F | None, event: Event) -> F:
        """The fold after one more event of ``game`` (``None`` before the first one)."""
        ...


class Projection(Folding[F], Protocol[F]):
    """What a read model needs: a fold over a game's events and how to render it."""

    name: str
    """Part of the key (``board``, ``score``) and of log lines."""
    group: str
    """The consumer group on the partition feeds."""

    def version(self, fold: F) -> int:
        """The version of the last event folded in."""
        ...

    def state_of(self, fold: F) -> HostedState:
        """The game's state folded in ``fold``."""
        ...

    def apply_evolved(
        self, game: HostedGame, fold: F | None, event: Event, state: HostedState
    ) -> F:
        """`apply`, given ``state``, the game's state after ``event``: projections folded
        together (`together.Together`) evolve the state once for all of them."""
        ...

    def render(self, game: HostedGame, fold: F) -> bytes:
        """The read model as stored (msgspec JSON)."""
        ...


class Evolving(Projection[F]):
    """A projection's `apply`, written once from its `state_of` and `apply_evolved`: the game's
    state evolved by one event, then the rest of the fold."""

    def apply(self, game: HostedGame, fold: F | None, event: Event) -> F:
        state = game.evolve(None if fold is None else self.state_of(fold), event)
        return self.apply_evolved(game, fold, event, state)


class Folds(Generic[F]):
    """The folds of ``projection`` over the games of ``store``, cached (see the module)."""

    def __init__(
        self, store: RedisEventStore, projection: Folding[F], cache_size: int, log: Logger
    ) -> None:
        self.store = store
        self.projection = projection
        self.cache: StateCache[F] = StateCache(cache_size)
        self._log = log

    def follow(self, game_id: str, entries: Sequence[FeedEntry]) -> Cached[F] | None:
        """The cached fold with ``entries`` folded in when they continue it exactly (the next
        versions, each event's ``prev_hash`` the hash before it), remembered; otherwise
        ``None`` and nothing changed (`advance` then compares with the stored model). No round
        trip: the model's write checks its event against the stream (`ReadModels`)."""
        cached = self.cache.get(game_id)
        if cached is None:
            return None
        ordered = sorted(entries, key=lambda item: item.version)
        if any(entry.version != cached.version + n for n, entry in enumerate(ordered, 1)):
            return None
        game = cached.adapter
        events = [game.decode_event(entry.data) for entry in ordered]
        last_hash = cached.last_hash
        for event in events:
            if event.prev_hash != last_hash:
                return None
            last_hash = event.hash
        folded = fold(cached, events, self.projection.apply, game)
        if folded is not None:
            self.cache.remember(game_id, folded)
        return folded

    async def advance(
        self,
        game_id: str,
        entries: Sequence[FeedEntry],
        stored: bytes | str | None,
        model_hash: bytes | str | None = None,
    ) -> Cached[F] | None:
        """The game's fold up to the newest of ``entries`` (cached, caught up from the game
        stream when behind or of another history), or ``None`` when the stored model has them
        all already and is on the stream's history."""
        newest = max(entry.version for entry in entries)
        if stored is not None and int(stored) >= newest:
            if await self.model_on_stream(game_id, int(stored), model_hash):
                return None  # redelivered: every one of these events is in the model already
            self._log.warning("model_not_on_stream", game_id=game_id, version=int(stored))
            return await self.replay(game_id)
        cached = self.cache.get(game_id)
        for entry in sorted(entries, key=lambda item: item.version):
            version = 0 if cached is None else cached.version
            if entry.version <= version:
                continue
            game = cached.adapter if cached is not None else None
            if game is None and entry.version == 1:
                game = game_reading(entry.data)  # a new game: its creation says which game
            if game is None or entry.version != version + 1:
                # A gap (the cache is missing or behind): the stream has the events and, with
                # its first one, the name of its game.
                cached = await self.catch_up(game_id, cached)
                continue
            event = game.decode_event(entry.data)
            if cached is not None and event.prev_hash != cached.last_hash:
                # The cache folded events the stream no longer has (lost writes, refilled).
                self._log.warning("state_cache_stale", game_id=game_id, version=version)
                return await self.replay(game_id)
            cached = fold(cached, [event], self.projection.apply, game)
        if cached is not None:
            self.cache.remember(game_id, cached)
        return cached

    async def model_on_stream(
        self, game_id: str, version: int, model_hash: bytes | str | None
    ) -> bool:
        """Whether the stream holds event ``version`` with the model's hash (a model written
        before models kept hashes is taken on trust)."""
        if not model_hash:
            return True
        at = await self.store.read(game_id, after_version=version - 1, limit=1)
        if not at or at[0].version != version:
            return False
        text = model_hash.decode() if isinstance(model_hash, bytes) else model_hash
        return stored_hash(at[0]) == text

    async def replay(self, game_id: str) -> Cached[F] | None:
        """Drop the game's cached fold and fold its whole stream again (the source of truth)."""
        self.cache.drop(game_id)
        cached = await self.catch_up(game_id, None)
        if cached is not None:
            self.cache.remember(game_id, cached)
        return cached

    async def catch_up(self, game_id: str, cached: Cached[F] | None) -> Cached[F] | None:
        """Fold the events of the game stream after the fold's version (the source of truth),
        from scratch when the stream does not continue the fold (`checked_fold`)."""
        stored = await self.store.read(game_id, after_version=read_from(cached))
        try:
            return checked_fold(cached, stored, self.projection.apply)
        except StaleCache as stale:
            self._log.warning("state_cache_stale", game_id=game_id, reason=str(stale))
            self.cache.drop(game_id)
            return fold_stored(None, await self.store.read(game_id), self.projection.apply)
