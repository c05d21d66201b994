"""Audit and explanation of finished games, from their stored events alone, worked out once
and then served from a cache (``gameserver.gateway.finished``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from gameplatform import game_names, get_game
from gameserver.gateway.dependencies import GameId, GatewayDep
from gameserver.gateway.openapi import body_of, errors
from gameserver.gateway.schemas import MsgspecResponse

router = APIRouter(tags=["audit"], default_response_class=MsgspecResponse)

REPORTS = tuple(get_game(name).audit_type for name in game_names())
EXPLANATIONS = tuple(get_game(name).explanation_type for name in game_names())


@router.get(
    "/games/{game_id}/audit",
    responses={**body_of(REPORTS, "The audit report"), **errors(404, 409, 422, 503)},
)
async def game_audit(game_id: GameId, gateway: GatewayDep) -> MsgspecResponse:
    """The dispute audit of a finished game, from its stored events alone: the hash chain,
    every recorded command re-decided, the revealed seed against its commitment and the
    deal, the final scoring. ``ok`` says whether everything holds, ``first_bad`` names the
    first bad event. 409 ``game_not_finished`` before the end (the stream holds the hands)."""
    return MsgspecResponse(await gateway.finished.audit(game_id))


@router.get(
    "/games/{game_id}/explanation",
    responses={**body_of(EXPLANATIONS, "The explanation"), **errors(404, 409, 422, 503)},
)
async def game_explanation(
    game_id: GameId,
    gateway: GatewayDep,
    seat: Annotated[
        str | None, Query(description="Only this colour's points (e.g. orange)")
    ] = None,
) -> MsgspecResponse:
    """Where every point of a finished game came from: one line per award with its rule
    and the running total, then scores, ranking and winners. 409 ``game_not_finished``
    before the end."""
    return MsgspecResponse(await gateway.finished.explanation(game_id, seat))
