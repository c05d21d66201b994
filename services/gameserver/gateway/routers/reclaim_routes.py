"""Seats that follow their player: a seat reclaimed on another device (docs/http-api.md,
"A seat on another device"; `gameserver.gateway.seat_recovery`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from gameserver.gateway.dependencies import GameId, GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import MAX_SEAT, ReclaimRequest, ReclaimResponse
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

router = APIRouter(tags=["games"])


async def user_of(gateway: GatewayDep, id_token: str) -> str:
    """The verified user of an identity token: 422 ``identity_not_configured`` on a server
    without an identity provider, 401 ``invalid_identity`` for a token it does not accept."""
    if gateway.identity is None:
        raise ApiError(
            422,
            "identity_not_configured",
            "This server has no identity provider: leave id_token out (keep the recovery code "
            "instead).",
        )
    return await gateway.identity.user(id_token)


@router.post(
    "/games/{game_id}/seats/{seat}/reclaim",
    response_model=ReclaimResponse,
    responses=errors(400, 401, 403, 404, 422, 503),
)
async def reclaim_seat(
    game_id: GameId,
    seat: Annotated[int, Path(ge=0, le=MAX_SEAT)],
    body: ReclaimRequest,
    gateway: GatewayDep,
) -> ReclaimResponse:
    """Take your seat back on another device, with the seat's recovery code or a fresh
    ``id_token`` of the user the seat is bound to. The answer holds a new seat token and a new
    recovery code, each shown once; the old token stops working and the used code with it."""
    await gateway.games.require(game_id)
    user = None if body.id_token is None else await user_of(gateway, body.id_token)
    token, recovery, old = await gateway.recovery.reclaim(
        game_id, seat, recovery=body.recovery, user=user
    )
    gateway.tokens.revoke(game_id, old)
    log.info("seat_reclaimed", game_id=game_id, seat=seat, by="user" if user else "recovery")
    return ReclaimResponse(game_id=game_id, seat=seat, token=token, recovery=recovery)
