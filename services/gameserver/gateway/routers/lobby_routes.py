"""The lobby and the host: find games, cancel a game, remove or let go of a player before the
start, resign a started game, take back a seat a bot plays since its time ran out
(docs/http-api.md, "Lobby and seats")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from gameplatform.interface import Table
from gameserver.gateway.command_relay import send_seat_action
from gameserver.gateway.dependencies import Credentials, GameId, Gateway, GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.lobby_entries import (
    SCAN_LIMIT,
    ClockSummary,
    Lobby,
    SeatSummary,
    clock_of,
    open_seats,
    seats_of,
)
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import (
    GAME_FIELD_HELP,
    MAX_SEAT,
    Accepted,
    BoardFilter,
    GameName,
    PhaseFilter,
)

router = APIRouter(tags=["lobby"])


class LobbyGame(BaseModel):
    game_id: str
    game: str = Field(description=GAME_FIELD_HELP)
    version: int
    board: str
    players: int
    phase: str
    current_seat: int | None
    seats: list[SeatSummary]
    open_seats: list[int] = Field(description="Seats a player may still take (lobby only)")
    seating: str = Field(description="open, or invite (a join needs the invitation code)")
    clock: ClockSummary | None


class LobbyPage(BaseModel):
    games: list[LobbyGame]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page")


# long: seven documented query parameters (the OpenAPI surface) before a short paging loop
@router.get("/games", response_model=LobbyPage, responses=errors(422, 503))
async def list_games(
    gateway: GatewayDep,
    phase: Annotated[
        PhaseFilter | None, Query(description="A phase, or `playing` for any phase of play")
    ] = None,
    game_name: Annotated[
        GameName | None, Query(alias="game", description="Only this game's")
    ] = None,
    board: Annotated[BoardFilter | None, Query(description="A board of any hosted game")] = None,
    players: Annotated[int | None, Query(ge=1, le=MAX_SEAT + 1)] = None,
    has_open_seats: Annotated[
        bool | None, Query(alias="open_seats", description="Only games with a free seat")
    ] = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> LobbyPage:
    """Games created on this server, newest first, filtered; ``next_cursor`` pages on (null at
    the end). A page may hold fewer than ``limit`` games when the filters are narrow: keep
    following ``next_cursor``."""
    lobby = Lobby(gateway.redis, gateway.layout)
    found: list[LobbyGame] = []
    scanned = 0
    while len(found) < limit and scanned < SCAN_LIMIT:
        ids, cursor = await lobby.page(cursor, min(limit, SCAN_LIMIT - scanned))
        scanned += len(ids)
        for position, game_id in enumerate(ids):
            try:
                game, state = await gateway.games.played(game_id)
            except ApiError:
                continue  # listed but never created (its creation was refused)
            table = game.table(state)
            wanted = _Wanted(phase, game_name, board, players, has_open_seats)
            if not wanted.admits(game.name, table):
                continue
            found.append(
                LobbyGame(
                    game_id=game_id,
                    game=game.name,
                    version=table.version,
                    board=table.board,
                    players=table.players,
                    phase=table.phase,
                    current_seat=table.current,
                    seats=seats_of(table),
                    open_seats=open_seats(table),
                    seating=await lobby.seating(game_id),
                    clock=clock_of(game, state),
                )
            )
            if len(found) == limit:
                cursor = await lobby.cursor_after(game_id) if position < len(ids) - 1 else cursor
                break
        if cursor is None:
            break
    return LobbyPage(games=found, next_cursor=cursor)


@dataclass(frozen=True, slots=True)
class _Wanted:
    """The filters of a lobby listing."""

    phase: str | None
    game: str | None
    board: str | None
    players: int | None
    open_seats: bool | None

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


async def _host(gateway: Gateway, game_id: str, credentials: Credentials) -> None:
    """401 without a token, 403 ``not_host`` for any token but the host's."""
    await gateway.games.require(game_id)
    if credentials is None or not credentials.credentials:
        raise ApiError(401, "missing_token", "Send the host token as 'Bearer <token>'.")
    if not await Lobby(gateway.redis, gateway.layout).is_host(game_id, credentials):
        raise ApiError(403, "not_host", "Only the host (who created the game) may do this.")


@router.post(
    "/games/{game_id}/cancel",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def cancel_game(game_id: GameId, gateway: GatewayDep, credentials: Credentials) -> Accepted:
    """The host cancels a game that has not started (409 ``wrong_phase`` once it has)."""
    await _host(gateway, game_id, credentials)
    return await send_seat_action(gateway, game_id, lambda game: game.cancel_command(), None)


@router.delete(
    "/games/{game_id}/seats/{seat}",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 422, 503, 504),
)
async def leave_seat(
    game_id: GameId,
    seat: Annotated[int, Path(ge=0, le=MAX_SEAT)],
    gateway: GatewayDep,
    credentials: Credentials,
) -> Accepted:
    """Before the start: the seat's player leaves (with the seat's token), or the host removes
    them (with the host token). The seat is free again; its token no longer works."""
    await gateway.games.require(game_id)
    if credentials is None or not credentials.credentials:
        raise ApiError(401, "missing_token", "Send the seat's token or the host token.")
    if await Lobby(gateway.redis, gateway.layout).is_host(game_id, credentials):
        result = await send_seat_action(gateway, game_id, lambda g: g.remove_command(seat), None)
    else:
        own = await gateway.seat_of(game_id, credentials)
        if own != seat:
            raise ApiError(403, "not_your_seat", "Only its player or the host may free a seat.")
        result = await send_seat_action(gateway, game_id, lambda g: g.leave_command(seat), seat)
    layout = gateway.layout
    pipe = gateway.redis.pipeline(transaction=False)
    pipe.hdel(layout.seats_key(game_id), str(seat))
    claims = layout.game_scoped_key("claims", game_id)  # the claim, recovery code, bound user
    pipe.hdel(claims, str(seat), f"recovery:{seat}", f"identity:{seat}")
    await pipe.execute()
    forget = getattr(gateway.tokens, "ended", None)  # a token cache must not answer it again
    if forget is not None:
        forget(game_id)
    return result


@router.post(
    "/games/{game_id}/resign",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def resign(game_id: GameId, gateway: GatewayDep, credentials: Credentials) -> Accepted:
    """Give up a started game: the seat is out of the game (docs/rules.md, "Leaving,
    resigning, clocks"); 409 ``wrong_phase`` before the start (leave the lobby instead)."""
    seat = await gateway.seated(game_id, credentials)
    return await send_seat_action(gateway, game_id, lambda game: game.resign_command(seat), seat)


@router.post(
    "/games/{game_id}/take-back",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def take_back(game_id: GameId, gateway: GatewayDep, credentials: Credentials) -> Accepted:
    """Take back your seat from the bot that plays it since your time ran out (the game's
    ``reclaim_command``): you play your next turns yourself. 409 ``not_offered`` for a game
    without it, the rule's code otherwise (Renature: ``not_a_bot_seat`` while you play it,
    ``wrong_phase`` before the start, ``game_over`` after the end). Any command you send takes
    the seat back as well, before it is decided."""
    seat = await gateway.seated(game_id, credentials)
    return await send_seat_action(gateway, game_id, lambda game: game.reclaim_command(seat), seat)
