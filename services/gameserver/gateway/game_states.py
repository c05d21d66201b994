"""Game states for reading: the game's stream replayed with the pure core, cached per game.

The gateway answers views, legal actions and events from the event store itself rather than
from a read model, so what a seat sees is exactly what the rules service decided on. The cache
keeps the latest folded state per game and only reads the events from its version on (the
cached last event again, to check the stream still holds it: a stream behind the cache or with
another history replaces it), so a view costs one short XRANGE once the game is warm.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from eventstore import RedisEventStore
from eventstore.keys import check_game_id
from gameplatform import get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.gateway.http_errors import ApiError
from gameserver.runtime.logging import get_logger
from gameserver.runtime.state_cache import GameLoader, game_of_stream

log = get_logger("renature.gateway")

KNOWN_GAMES = 100_000


class Played(NamedTuple):
    """A game's adapter (`gameplatform.Game`) and its current state."""

    game: HostedGame
    state: HostedState


class GameStates:
    """Folded game states over the event store (a `GameLoader`), with the gateway's 404s."""

    def __init__(self, store: RedisEventStore, max_games: int = 2048) -> None:
        self._store = store
        self._loader = GameLoader(store, max_games, log)
        self._known: OrderedDict[str, str] = OrderedDict()
        """The game of game ids seen lately (`game_of`), beyond the states cached."""
        self._max_games = max_games
        self._statuses: OrderedDict[str, tuple[HostedState, list[str]]] = OrderedDict()
        """The seats' statuses of a cached state (`cached_statuses`), with that state."""

    async def played(self, game_id: str) -> Played:
        """The game's adapter and current state; 404 ``game_not_found`` when it has no
        events."""
        played, _ = await self.head(game_id)
        return played

    def cached(self, game_id: str) -> HostedState | None:
        """The game's state as last folded here, without reading the store (None when the game
        is not cached): possibly behind the stream, for a cheap look only."""
        entry = self._loader.cache.get(game_id)
        return None if entry is None else entry.value

    def cached_statuses(self, game_id: str) -> list[str] | None:
        """The seats' statuses (`Table.statuses`) of the game's cached state (`cached`),
        worked out once per state rather than on every move; None when it is not cached."""
        entry = self._loader.cache.get(game_id)
        if entry is None:
            return None
        known = self._statuses.get(game_id)
        if known is not None and known[0] is entry.value:
            return known[1]
        statuses = list(entry.adapter.table(entry.value).statuses)
        self._statuses[game_id] = (entry.value, statuses)
        self._statuses.move_to_end(game_id)
        while len(self._statuses) > self._max_games:
            self._statuses.popitem(last=False)
        return statuses

    async def state(self, game_id: str) -> HostedState:
        """The game's current state (`played`)."""
        return (await self.played(game_id)).state

    async def head(self, game_id: str) -> tuple[Played, str]:
        """`played`, and the hash of the game's last event, which names its history (a version
        alone does not: a crash under ``everysec`` may take events back, and the game go on
        to the same version with others)."""
        self._check_id(game_id)
        entry = await self._loader.load_entry(game_id)
        if entry is None:
            raise no_such_game(game_id)
        return Played(entry.adapter, entry.value), entry.last_hash

    async def game_of(self, game_id: str) -> HostedGame:
        """The game a game id is a game of, as its stream's first event names it (one short
        read unless the game is cached; never a fold, so a stream corrupted further on still
        answers); 404 for an unknown game."""
        entry = self._loader.cache.get(game_id)
        if entry is not None:
            return entry.adapter
        if (known := self._known.get(game_id)) is not None:
            return get_game(known)
        self._check_id(game_id)
        first = await self._store.read(game_id, after_version=0, limit=1)
        if not first:
            raise no_such_game(game_id)
        game = game_of_stream(first)
        self._known[game_id] = game.name  # a game's game never changes
        while len(self._known) > KNOWN_GAMES:
            self._known.popitem(last=False)
        return game

    async def is_over(self, game_id: str) -> bool:
        """Whether the game has ended, from its last event alone (one short read, no fold): a
        game's ending event is its last (`HostedGame.ends`; tests/unit/renaissance/
        test_gameplatform_contract.py checks it against ``is_over`` after every event of every
        game); 404 for an unknown game."""
        game = await self.game_of(game_id)
        last = await self._store.last(game_id)
        if last is None:
            raise no_such_game(game_id)
        return game.ends(game.decode_event(last.data))

    async def stored_at(self, game_id: str, version: int) -> bytes | None:
        """The event at ``version`` as stored (None when the game has no such version)."""
        stored = await self._store.read(game_id, after_version=version - 1, limit=1)
        return stored[0].data if stored and stored[0].version == version else None

    async def events(self, game_id: str, after: int) -> list[Event]:
        """The decoded events after version ``after`` (404 for an unknown game)."""
        game = await self.game_of(game_id)
        stored = await self._store.read(game_id, after_version=max(after, 0))
        return [game.decode_event(s.data) for s in stored]

    async def require(self, game_id: str) -> None:
        """404 unless the game exists (cheaper than a replay)."""
        self._check_id(game_id)
        if game_id not in self._loader.cache and not await self._store.exists(game_id):
            raise no_such_game(game_id)

    @staticmethod
    def _check_id(game_id: str) -> None:
        """A malformed id can name no game: answer 404 before building a key from it."""
        try:
            check_game_id(game_id)
        except ValueError as error:
            raise no_such_game(game_id) from error


def no_such_game(game_id: str) -> ApiError:
    """The 404 of a game id that names no game."""
    return ApiError(404, "game_not_found", f"There is no game {game_id!r}.")
