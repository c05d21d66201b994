"""The boards of every hosted game: the geometry a client draws (``renature board show NAME
--json``), for a game whose board has more than its picture (each game's ``board_geometry``)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Path, Query

from gameplatform import game_names, get_game
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, errors
from gameserver.gateway.schemas import MsgspecResponse

router = APIRouter(tags=["boards"])

CACHE = {"Cache-Control": "public, max-age=86400"}

GameQuery = Annotated[
    str | None,
    Query(
        description="Only this game's boards (a name the catalog lists)",
        json_schema_extra={"enum": list(game_names())},
    ),
]


class BoardSummary(msgspec.Struct, frozen=True):
    id: str
    game: str
    name: str
    """The board's own name where its game gives a geometry, else its id."""
    geometry: bool
    """Whether ``GET /boards/{id}?game=`` answers its geometry."""


def _games(game: str | None) -> list[str]:
    if game is None:
        return list(game_names())
    if game not in game_names():
        raise ApiError(422, "unknown_game", f"game: one of {', '.join(game_names())}, not {game!r}")
    return [game]


@cache
def _geometry(game: str, board: str) -> msgspec.Struct | None:
    return get_game(game).board_geometry(board)


@router.get(
    "/boards",
    response_class=MsgspecResponse,
    responses={**body(list[BoardSummary], "Every board a game can be played on"), **errors(422)},
)
async def boards(game: GameQuery = None) -> MsgspecResponse:
    """The boards each game can be created on (``board`` of ``POST /games``)."""
    summaries = []
    for name in _games(game):
        for board_id in get_game(name).boards:
            geometry = _geometry(name, board_id)
            title = str(getattr(geometry, "name", board_id))
            summaries.append(BoardSummary(board_id, name, title, geometry is not None))
    return MsgspecResponse(summaries, headers=CACHE)


@router.get(
    "/boards/{name}",
    response_class=MsgspecResponse,
    responses={
        **body(dict[str, Any], "The board's geometry, as its game gives it"),
        **errors(404, 422),
    },
)
async def board(
    name: Annotated[str, Path(description="A board's id, as `GET /boards` lists it")],
    game: GameQuery = None,
) -> MsgspecResponse:
    """The board's geometry as its game gives it (Renature's: every cell with its kind and area,
    the areas with their cells, starting spaces, clouds, stumps and area tokens; x grows to the
    right, y downwards; commands name cells the same way). The first game (or ``game``) with
    a board of that id and a geometry answers."""
    for candidate in _games(game):
        if name in get_game(candidate).boards:
            geometry = _geometry(candidate, name)
            if geometry is not None:
                return MsgspecResponse(_encoded(candidate, name), headers=CACHE)
    raise ApiError(404, "board_not_found", f"There is no board {name!r} with a geometry.")


@cache
def _encoded(game: str, board: str) -> bytes:
    return msgspec.json.encode(_geometry(game, board))
