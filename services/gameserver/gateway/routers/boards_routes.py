"""The boards: the geometry a client draws (``renature board show ID --json``)."""

from __future__ import annotations

from functools import cache
from typing import Annotated

import msgspec
from fastapi import APIRouter, Path

from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, errors
from gameserver.gateway.schemas import MsgspecResponse
from renature.board import BOARD_IDS, BoardJson, board_json, load_board

router = APIRouter(tags=["boards"])

CACHE = {"Cache-Control": "public, max-age=86400"}


class BoardSummary(msgspec.Struct, frozen=True):
    id: str
    name: str
    variant: str
    scoring: str


@cache
def _json(board_id: str) -> bytes:
    return msgspec.json.encode(board_json(load_board(board_id)))


@router.get(
    "/boards",
    response_class=MsgspecResponse,
    responses=body(list[BoardSummary], "Every board a game can be played on"),
)
async def boards() -> MsgspecResponse:
    """The boards a game can be created on (``board`` of ``POST /games``)."""
    summaries = []
    for board_id in BOARD_IDS:
        board = load_board(board_id)
        summaries.append(BoardSummary(board.id, board.name, board.variant, board.scoring))
    return MsgspecResponse(summaries, headers=CACHE)


@router.get(
    "/boards/{name}",
    response_class=MsgspecResponse,
    responses={**body(BoardJson, "The board's geometry"), **errors(404)},
)
async def board(
    name: Annotated[str, Path(description="base, valley or valley-back")],
) -> MsgspecResponse:
    """Every cell with its kind (area, brook or meadow) and area, the areas with their cells,
    starting spaces, clouds, stumps and area tokens: what a client needs to draw the board.
    x grows to the right, y downwards; commands name cells the same way."""
    if name not in BOARD_IDS:
        raise ApiError(
            404, "board_not_found", f"There is no board {name!r}; boards: {', '.join(BOARD_IDS)}."
        )
    return MsgspecResponse(_json(name), headers=CACHE)
