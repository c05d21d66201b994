"""Game states for reading: the game's stream replayed with the pure core, cached per game.

The gateway answers views, legal actions and events from the event store itself rather than
from a read model, so what a seat sees is exactly what the rules service decided on. The cache
keeps the latest folded state per game and only reads the events from its version on (the
cached last event again, to check the stream still holds it: a stream behind the cache or with
another history replaces it), so a view costs one short XRANGE once the game is warm.
"""

from __future__ import annotations

from renature import events as e
from renature.state import GameState
from renature_services.gateway.errors import ApiError
from renature_services.logging import get_logger
from renature_services.state_cache import GameLoader
from renature_store import RedisEventStore
from renature_store.keys import check_game_id

log = get_logger("renature.gateway")


class GameStates:
    """Folded game states over the event store (a `GameLoader`), with the gateway's 404s."""

    def __init__(self, store: RedisEventStore, max_games: int = 2048) -> None:
        self._store = store
        self._loader = GameLoader(store, max_games, log)

    async def state(self, game_id: str) -> GameState:
        """The game's current state; 404 ``game_not_found`` when it has no events."""
        self._check_id(game_id)
        state = await self._loader.load(game_id)
        if state is None:
            raise ApiError(404, "game_not_found", f"There is no game {game_id!r}.")
        return state

    async def events(self, game_id: str, after: int) -> list[e.Event]:
        """The decoded events after version ``after`` (404 for an unknown game)."""
        self._check_id(game_id)
        stored = await self._store.read(game_id, after_version=max(after, 0))
        if not stored and not await self._store.exists(game_id):
            raise ApiError(404, "game_not_found", f"There is no game {game_id!r}.")
        return [e.decode(s.data) for s in stored]

    async def require(self, game_id: str) -> None:
        """404 unless the game exists (cheaper than a replay)."""
        self._check_id(game_id)
        if game_id not in self._loader.cache and not await self._store.exists(game_id):
            raise ApiError(404, "game_not_found", f"There is no game {game_id!r}.")

    @staticmethod
    def _check_id(game_id: str) -> None:
        """A malformed id can name no game: answer 404 before building a key from it."""
        try:
            check_game_id(game_id)
        except ValueError as error:
            raise ApiError(404, "game_not_found", f"There is no game {game_id!r}.") from error
