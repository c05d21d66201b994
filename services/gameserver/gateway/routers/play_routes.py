"""Play: a seated player's commands, handed to the rules service."""

from __future__ import annotations

from fastapi import APIRouter

from gameserver.gateway.command_relay import accepted_or_raise, seat_command
from gameserver.gateway.dependencies import Credentials, GameId, GatewayDep
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import Accepted, CommandRequest
from gameserver.runtime.bus import CommandEnvelope

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
    ``illegal_placement``, ...), 422 for ``invalid_command``; nothing is appended then."""
    seat = await gateway.seated(game_id, credentials)
    game = await gateway.games.game_of(game_id)
    command = seat_command(body.command, seat, game)
    # Command ids are namespaced per seat, so one seat can never pre-empt (or read the
    # outcome of) another seat's command by guessing its id.
    envelope = CommandEnvelope(game_id, f"seat{seat}:{body.command_id}", command, seat, game.name)
    return accepted_or_raise(await gateway.send(envelope), body.command_id)
