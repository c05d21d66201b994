"""The lobby and the host: find games, cancel a game, remove or let go of a player before the
start, resign a started game, take back a seat a bot plays since its time ran out
(docs/http-api.md, "Lobby and seats")."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from gameserver.gateway.case_book import CasesDep
from gameserver.gateway.dependencies import Credentials, GameId, token_of
from gameserver.gateway.lobby_entries import ClockSummary, SeatSummary, clock_of, seats_of
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import (
    GAME_FIELD_HELP,
    MAX_SEAT,
    Accepted,
    BoardFilter,
    GameName,
    PhaseFilter,
)
from gameserver.gateway.use_cases.game_listing import Listed, Wanted, open_seats

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


@router.get("/games", response_model=LobbyPage, responses=errors(422, 503))
async def list_games(
    cases: CasesDep,
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
    wanted = Wanted(phase, game_name, board, players, has_open_seats)
    page = await cases.listing.page(wanted, cursor, limit)
    return LobbyPage(games=[_entry(listed) for listed in page.games], next_cursor=page.next_cursor)


def _entry(listed: Listed) -> LobbyGame:
    table = listed.table
    return LobbyGame(
        game_id=listed.game_id,
        game=listed.game.name,
        version=table.version,
        board=table.board,
        players=table.players,
        phase=table.phase,
        current_seat=table.current,
        seats=seats_of(table),
        open_seats=open_seats(table),
        seating=listed.seating,
        clock=clock_of(listed.game, listed.state),
    )


@router.post(
    "/games/{game_id}/cancel",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def cancel_game(game_id: GameId, cases: CasesDep, credentials: Credentials) -> Accepted:
    """The host cancels a game that has not started (409 ``wrong_phase`` once it has)."""
    return Accepted(**asdict(await cases.seats.cancel(game_id, token_of(credentials))))


@router.delete(
    "/games/{game_id}/seats/{seat}",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 422, 503, 504),
)
async def leave_seat(
    game_id: GameId,
    seat: Annotated[int, Path(ge=0, le=MAX_SEAT)],
    cases: CasesDep,
    credentials: Credentials,
) -> Accepted:
    """Before the start: the seat's player leaves (with the seat's token), or the host removes
    them (with the host token). The seat is free again; its token no longer works."""
    return Accepted(**asdict(await cases.seats.leave(game_id, seat, token_of(credentials))))


@router.post(
    "/games/{game_id}/resign",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def resign(game_id: GameId, cases: CasesDep, credentials: Credentials) -> Accepted:
    """Give up a started game: the seat is out of the game (docs/rules.md, "Leaving,
    resigning, clocks"); 409 ``wrong_phase`` before the start (leave the lobby instead)."""
    return Accepted(**asdict(await cases.seats.resign(game_id, token_of(credentials))))


@router.post(
    "/games/{game_id}/take-back",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 503, 504),
)
async def take_back(game_id: GameId, cases: CasesDep, credentials: Credentials) -> Accepted:
    """Take back your seat from the bot that plays it since your time ran out (the game's
    ``reclaim_command``): you play your next turns yourself. 409 ``not_offered`` for a game
    without it, the rule's code otherwise (Renature: ``not_a_bot_seat`` while you play it,
    ``wrong_phase`` before the start, ``game_over`` after the end). Any command you send takes
    the seat back as well, before it is decided."""
    return Accepted(**asdict(await cases.seats.take_back(game_id, token_of(credentials))))
