"""Play: a seated player's commands, handed to the rules service."""

from __future__ import annotations

from fastapi import APIRouter

from gameserver.gateway.command_relay import relay
from gameserver.gateway.dependencies import Credentials, GameId, GatewayDep
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import Accepted, CommandRequest

router = APIRouter(tags=["play"])


@router.post(
    "/games/{game_id}/commands",
    response_model=Accepted,
    responses=errors(400, 401, 403, 404, 409, 422, 503, 504),
)
async def send_command(
    game_id: GameId, body: CommandRequest, credentials: Credentials, gateway: GatewayDep
) -> Accepted:
    """Play a move for your seat. 409 when the rules refuse it (``not_your_turn``,
    ``illegal_placement``, ...), 422 for ``invalid_command``; nothing is appended then.
    (Served by ``gameserver.gateway.fast_moves`` when the request is well formed: this route
    answers the rest, and gives the OpenAPI document its entry.)"""
    seat = await gateway.seated(game_id, credentials)
    return (await relay(gateway, game_id, seat, body.command_id, body.command))[0]
