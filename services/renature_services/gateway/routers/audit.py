"""Audit and explanation of finished games, from their stored events alone."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from renature import events as e
from renature.audit import AuditReport, audit
from renature.components import COLOURS
from renature.explain import Explanation, explain
from renature.state import GameState
from renature_services.gateway.dependencies import GameId, Gateway, GatewayDep
from renature_services.gateway.errors import ApiError
from renature_services.gateway.openapi import body, errors
from renature_services.gateway.schemas import MsgspecResponse

router = APIRouter(tags=["audit"], default_response_class=MsgspecResponse)


@router.get(
    "/games/{game_id}/audit",
    responses={**body(AuditReport, "The audit report"), **errors(404, 409, 422, 503)},
)
async def game_audit(game_id: GameId, gateway: GatewayDep) -> MsgspecResponse:
    """The dispute audit of a finished game, from its stored events alone: the hash chain,
    every recorded command re-decided, the revealed seed against its commitment and the
    deal, the final scoring. ``ok`` says whether everything holds, ``first_bad`` names the
    first bad event. 409 ``game_not_finished`` before the end (the stream holds the hands)."""
    _, events = await _finished_game(gateway, game_id)
    return MsgspecResponse(audit(events))


@router.get(
    "/games/{game_id}/explanation",
    responses={**body(Explanation, "The explanation"), **errors(404, 409, 422, 503)},
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
    state, events = await _finished_game(gateway, game_id)
    return MsgspecResponse(explain(events, None if seat is None else _seat_playing(state, seat)))


def _seat_playing(state: GameState, colour: str) -> int:
    """The seat that plays ``colour``; 422 ``no_such_seat`` when none does."""
    colours = [COLOURS[s.colour] for s in state.seats]
    if colour not in colours:
        raise ApiError(
            422,
            "no_such_seat",
            f"No seat plays {colour!r} in this game; its colours are {', '.join(colours)}.",
        )
    return colours.index(colour)


async def _finished_game(gateway: Gateway, game_id: str) -> tuple[GameState, list[e.Event]]:
    """A finished game's state and every stored event: 404 for an unknown game, 409 before
    its end (until the seed is revealed the stream holds every hand and token)."""
    state = await gateway.games.state(game_id)
    if not state.is_over:
        raise ApiError(
            409,
            "game_not_finished",
            "The game is not finished: its audit and explanation are given once it has ended.",
        )
    return state, await gateway.games.events(game_id, 0)
