"""The lobby's reads: the games created here, newest first and filtered, and one game's public
summary (its table, where its seed came from, how its seats are given)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gameplatform.interface import HostedGame, Table
from gameserver.gateway.use_cases.ports import GameMarks, GameReads, LobbyIndex
from gameserver.gateway.use_cases.refusals import Refusal

SCAN_LIMIT = 500
"""At most this many games are looked at for one page (the page may then be short; its
``next_cursor`` goes on from where the scan stopped)."""


@dataclass(frozen=True, slots=True)
class Listed:
    """A game as the lobby shows it: its adapter, its state, its table and its seating."""

    game_id: str
    game: HostedGame
    state: Any
    table: Table
    seating: str


@dataclass(frozen=True, slots=True)
class Page:
    games: list[Listed]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class Wanted:
    """The filters of a lobby listing (None: any)."""

    phase: str | None = None
    """A phase, or ``playing``: any phase of play."""
    game: str | None = None
    board: str | None = None
    players: int | None = None
    open_seats: bool | None = None

    def admits(self, game: str, table: Table) -> bool:
        if self.game is not None and game != self.game:
            return False
        if self.phase == "playing" and (not table.started or table.to_move is None):
            return False
        if self.phase not in (None, "playing") and table.phase != self.phase:
            return False
        if self.board is not None and table.board != self.board:
            return False
        if self.players is not None and table.players != self.players:
            return False
        return self.open_seats is None or bool(open_seats(table)) == self.open_seats


def open_seats(table: Table) -> list[int]:
    """The seats a player may still take (none once the game has started)."""
    if table.started:
        return []
    return [n for n, name in enumerate(table.names) if name is None]


@dataclass(frozen=True, slots=True)
class Summary:
    """A game's public facts (``seed_origin``: None for a game no gateway created)."""

    game_id: str
    game: HostedGame
    state: Any
    table: Table
    seed_origin: str | None
    seating: str


class GameListing:
    """The lobby's listing and a game's summary, over the read side and the lobby's index."""

    def __init__(
        self, games: GameReads, index: LobbyIndex, marks: GameMarks, scan_limit: int = SCAN_LIMIT
    ) -> None:
        self._games = games
        self._index = index
        self._marks = marks
        self._scan_limit = scan_limit

    async def summary(self, game_id: str) -> Summary:
        """A game's public facts; ``not_found`` for an unknown game."""
        game, state = await self._games.played(game_id)
        return Summary(
            game_id=game_id,
            game=game,
            state=state,
            table=game.table(state),
            seed_origin=await self._marks.seed_origin(game_id),
            seating=await self._index.seating(game_id),
        )

    async def page(self, wanted: Wanted, cursor: str | None, limit: int) -> Page:
        """Up to ``limit`` games after ``cursor`` that ``wanted`` admits, newest first, and the
        cursor that goes on (None at the end). A page may hold fewer than ``limit`` games when
        the filters are narrow: at most ``scan_limit`` games are looked at for one page."""
        found: list[Listed] = []
        scanned = 0
        while len(found) < limit and scanned < self._scan_limit:
            ids, cursor = await self._index.page(cursor, min(limit, self._scan_limit - scanned))
            scanned += len(ids)
            for position, game_id in enumerate(ids):
                listed = await self._listed(game_id, wanted)
                if listed is None:
                    continue
                found.append(listed)
                if len(found) == limit:
                    if position < len(ids) - 1:
                        cursor = await self._index.cursor_after(game_id)
                    break
            if cursor is None:
                break
        return Page(games=found, next_cursor=cursor)

    async def _listed(self, game_id: str, wanted: Wanted) -> Listed | None:
        try:
            game, state = await self._games.played(game_id)
        except Refusal:
            return None  # listed but never created (its creation was refused)
        table = game.table(state)
        if not wanted.admits(game.name, table):
            return None
        return Listed(game_id, game, state, table, await self._index.seating(game_id))
