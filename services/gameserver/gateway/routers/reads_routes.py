"""Reads: each viewer's picture of a game, replayed from its stream with the pure core, and
the projectors' read models."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from eventstore import MAX_VERSION
from gameplatform import game_names, get_game
from gameserver.gateway.dependencies import Credentials, GameId, Gateway, GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, body_of, errors
from gameserver.gateway.schemas import MsgspecResponse
from gameserver.projectors.score_projection import ScoreModel
from gameserver.runtime.healing import backoff_delays

router = APIRouter(tags=["read"], default_response_class=MsgspecResponse)

GAMES = [get_game(name) for name in game_names()]
"""Every answer below is one of the hosted games' (the game of the game asked about)."""
VIEWS = tuple(game.view_type for game in GAMES)
STATES = tuple(game.state_type for game in GAMES)
COMMANDS = tuple(list[game.seat_command_type] for game in GAMES)  # type: ignore[name-defined]
EVENTS = tuple(list[game.event_type] for game in GAMES)  # type: ignore[name-defined]
models = APIRouter(tags=["read models"], default_response_class=MsgspecResponse)


@router.get(
    "/games/{game_id}/view",
    responses={**body_of(VIEWS, "Your seat's view"), **errors(401, 403, 404, 422, 503)},
)
async def seat_view(
    game_id: GameId, credentials: Credentials, gateway: GatewayDep
) -> MsgspecResponse:
    """The game as your seat sees it: your hand, nobody else's."""
    seat = await gateway.seated(game_id, credentials)
    game, state = await gateway.games.played(game_id)
    return MsgspecResponse(game.view(state, seat))


@router.get(
    "/games/{game_id}/spectator",
    responses={**body_of(VIEWS, "The spectator view"), **errors(404, 422, 503)},
)
async def spectator_view(game_id: GameId, gateway: GatewayDep) -> MsgspecResponse:
    """The game as a spectator sees it: no hands, no token backs."""
    game, state = await gateway.games.played(game_id)
    return MsgspecResponse(game.view(state, None))


@router.get(
    "/games/{game_id}/state",
    responses={
        **body_of(STATES, "Your seat's perspective of the state"),
        **errors(401, 403, 404, 422, 503),
    },
)
async def seat_state(
    game_id: GameId, credentials: Credentials, gateway: GatewayDep
) -> MsgspecResponse:
    """Your seat's own-perspective ``GameState`` (for bots using the pure core): every
    secret your seat may not know is replaced by a stand-in (see docs/http-api.md)."""
    seat = await gateway.seated(game_id, credentials)
    game, state = await gateway.games.played(game_id)
    return MsgspecResponse(game.state_json(state, seat))


@router.get(
    "/games/{game_id}/legal-actions",
    responses={
        **body_of(COMMANDS, "Every command your seat may send now"),
        **errors(401, 403, 404, 422, 503),
    },
)
async def seat_legal_actions(
    game_id: GameId, credentials: Credentials, gateway: GatewayDep
) -> MsgspecResponse:
    """Every command your seat may send now (empty when it is not your turn)."""
    seat = await gateway.seated(game_id, credentials)
    game, state = await gateway.games.played(game_id)
    return MsgspecResponse(game.legal_actions(state, seat))


@router.get(
    "/games/{game_id}/events",
    responses={
        **body_of(EVENTS, "The events after `after`, as you may see them"),
        **errors(403, 404, 422, 503),
    },
    # The token is optional here: without one the events are shown as to a spectator.
    openapi_extra={"security": [{}]},
)
async def game_events(
    game_id: GameId,
    credentials: Credentials,
    gateway: GatewayDep,
    after: Annotated[
        int, Query(ge=0, le=MAX_VERSION, description="Only events after this version")
    ] = 0,
) -> MsgspecResponse:
    """The game's events after ``after``, with the secrets your seat (or a spectator) may
    not see blanked out."""
    await gateway.games.require(game_id)
    viewer = await gateway.viewer_of(game_id, credentials)
    game = await gateway.games.game_of(game_id)
    events = await gateway.games.events(game_id, after)
    return MsgspecResponse([game.visible_event(event, viewer) for event in events])


@models.get(
    "/games/{game_id}/board",
    responses={**body_of(VIEWS, "The board model"), **errors(404, 422, 503)},
)
async def board_model(game_id: GameId, gateway: GatewayDep) -> MsgspecResponse:
    """The board projector's read model (the spectator view, as last projected; it may lag
    a few events behind ``/spectator``). ``X-Model-Version`` says which version it shows."""
    return await _read_model(gateway, game_id, "board")


@models.get(
    "/games/{game_id}/scores",
    responses={**body(ScoreModel, "The score model"), **errors(404, 422, 503)},
)
async def score_model(game_id: GameId, gateway: GatewayDep) -> MsgspecResponse:
    """The score projector's read model: scores with every award and its reason."""
    return await _read_model(gateway, game_id, "score")


PROJECTION_WAIT_S = 1.0
"""How long a read of a game's model waits for the game's first projection before it answers
``not_projected``: the projectors follow the events within milliseconds, and a client that has
just created a game and asks for its board at once should get it, not a 404."""


async def _read_model(gateway: Gateway, game_id: str, name: str) -> MsgspecResponse:
    """A projector's model (``KeyLayout.model_key``), with the version it shows."""
    await gateway.games.require(game_id)
    stored = await _first_projection(gateway, game_id, name)
    if stored is None:
        raise ApiError(404, "not_projected", f"The {name} of this game is not projected yet.")
    version, model = stored
    return MsgspecResponse(model, headers={"X-Model-Version": str(version)})


async def _first_projection(gateway: Gateway, game_id: str, name: str) -> tuple[int, bytes] | None:
    """The model of a game that exists, read again (5 ms apart, then twice as long each time,
    at most 100 ms) until it is projected or `PROJECTION_WAIT_S` has passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PROJECTION_WAIT_S
    pauses = backoff_delays(first=0.005, cap=0.1)
    while (stored := await gateway.read_model(name, game_id)) is None:
        pause = next(pauses)
        if loop.time() + pause > deadline:
            return None
        await asyncio.sleep(pause)
    return stored
