"""Seats that follow their player: a seat reclaimed on another device (docs/http-api.md,
"A seat on another device"; `gameserver.gateway.seat_recovery`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Path

from gameserver.gateway.case_book import CasesDep
from gameserver.gateway.dependencies import GameId
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import MAX_SEAT, ReclaimRequest, ReclaimResponse

router = APIRouter(tags=["games"])


@router.post(
    "/games/{game_id}/seats/{seat}/reclaim",
    response_model=ReclaimResponse,
    responses=errors(400, 401, 403, 404, 422, 503),
)
async def reclaim_seat(
    game_id: GameId,
    seat: Annotated[int, Path(ge=0, le=MAX_SEAT)],
    body: ReclaimRequest,
    cases: CasesDep,
) -> ReclaimResponse:
    """Take your seat back on another device, with the seat's recovery code or a fresh
    ``id_token`` of the user the seat is bound to. The answer holds a new seat token and a new
    recovery code, each shown once; the old token stops working and the used code with it."""
    reclaimed = await cases.reclaim_seat(game_id, seat, body.recovery, body.id_token)
    return ReclaimResponse(**asdict(reclaimed))
