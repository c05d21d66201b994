"""Games and seats: create a game, read its public summary, take a seat, start it."""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Header, Path, Response

from gameplatform.creation import Asked, CreationError, NotHosted, options_dict, read_creation
from gameserver.gateway.command_relay import accepted_or_raise
from gameserver.gateway.dependencies import Credentials, GameId, GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.idempotency import (
    IDEMPOTENCY_HEADER,
    KEY_PATTERN,
    fingerprint,
    game_id_for,
    in_flight,
    join,
    key_reused,
)
from gameserver.gateway.lobby_entries import Lobby, clock_of, open_seats, seats_of
from gameserver.gateway.openapi import errors
from gameserver.gateway.routers.reclaim_routes import user_of
from gameserver.gateway.schemas import (
    MAX_SEAT,
    Accepted,
    CreateGameRequest,
    CreateGameResponse,
    GameSummary,
    JoinRequest,
    JoinResponse,
)
from gameserver.gateway.seat_recovery import recovery_for
from gameserver.gateway.seat_tokens import new_token
from gameserver.runtime.bus import CommandEnvelope
from gameserver.runtime.seed_vault import RedisSeedVault

router = APIRouter(tags=["games"])

# Typed `str` (not `str | None`) with a None default: the header is optional, but its schema
# in the document is a plain string, so no client (or fuzzer) is told that "null" is a key.
IdempotencyKey = Annotated[
    str,
    Header(
        alias=IDEMPOTENCY_HEADER,
        pattern=KEY_PATTERN.pattern,  # stated in the document, so clients see the rule
        description="A secret you generate (16-128 characters from A-Z a-z 0-9 - _ . ~) and "
        "send again with every retry of this request: a retry gets the same game, or the same "
        "seat and token (see docs/http-api.md).",
    ),
]


@router.post(
    "/games",
    status_code=201,
    response_model=CreateGameResponse,
    responses=errors(400, 403, 409, 422, 503, 504),
)
async def create_game(
    body: CreateGameRequest,
    gateway: GatewayDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,  # type: ignore[assignment]
) -> CreateGameResponse:
    """Create a game. Without ``seed`` the rules service deals from a secret random seed
    (revealed at the end); a ``seed`` is for tests, bots and tournaments. With an
    ``Idempotency-Key`` a retry creates nothing new and answers the same game; the key with
    another body is refused (422 ``idempotency_key_reused``), and so is a retry while the first
    request is still answered (409 ``idempotency_key_in_flight``)."""
    asked = _read(body)
    if idempotency_key is None:
        created = await _create(gateway, uuid.uuid4().hex, asked, None)
    else:
        game_id = game_id_for(idempotency_key)
        async with in_flight(gateway, game_id, "create"):
            created = await _keyed_create(gateway, game_id, asked, idempotency_key)
    response.headers["Location"] = f"/games/{created.game_id}"
    return created


async def _keyed_create(
    gateway: GatewayDep, game_id: str, asked: Asked, key: str
) -> CreateGameResponse:
    """A keyed creation: its body's fingerprint is recorded first, so that the key with another
    body changes nothing (422); a refused creation forgets the fingerprint it recorded."""
    lobby = Lobby(gateway.redis, gateway.layout)
    game, creation, options = asked
    # The body as read (defaults filled in): the same request always gives the same one.
    request = fingerprint(key, msgspec.json.encode([game.name, creation, options]))
    held = await lobby.hold_request(game_id, request)
    if held is False:
        raise key_reused()
    try:
        return await _create(gateway, game_id, asked, key)
    except ApiError as error:
        if held and error.status not in (503, 504):  # ours, and no game may come of it
            await lobby.forget_request(game_id, request)
        raise


async def _create(
    gateway: GatewayDep,
    game_id: str,
    asked: Asked,
    idempotency_key: str | None,
) -> CreateGameResponse:
    game, creation, options = asked
    board = creation.board
    command = game.create_command(game_id, creation.players, board, options_dict(options))
    secret = game.seed_secret and creation.seed is not None
    if secret:
        seed = creation.seed or ""
        await _choose_seed(gateway, game_id, seed, retry=idempotency_key is not None)
    elif creation.seed is not None:  # a seed that deals nothing hidden is public
        command = game.with_seed(command, creation.seed)
    # A secret seed stays blank on the bus: the rules service takes it from its vault.
    reply = await gateway.send(CommandEnvelope(game_id, "create", command, None, game.name))
    result = accepted_or_raise(reply, "create")
    public = not game.seed_secret
    chosen = creation.seed is not None
    await gateway.tokens.mark_created(game_id, chosen_seed=chosen, public=public)
    host_token, invite_code = await Lobby(gateway.redis, gateway.layout).register(
        game_id,
        seating=creation.seating,
        created_ms=int(time.time() * 1000),
        idempotency_key=idempotency_key,
    )
    return CreateGameResponse(
        game_id=game_id,
        game=game.name,
        players=creation.players,
        board=board,
        version=result.version,
        seed="public" if public else "chosen" if chosen else "secret",
        host_token=host_token,
        invite_code=invite_code,
    )


def _read(body: dict[str, Any]) -> Asked:
    """The game, creation and options a body asks for (`read_creation`), or a 422 naming what
    is wrong: an unknown field (and the game), a value, or a game not hosted here."""
    try:
        return read_creation(body)
    except CreationError as error:
        code = "unknown_game" if isinstance(error, NotHosted) else "malformed_request"
        raise ApiError(422, code, str(error)) from None


async def _choose_seed(gateway: GatewayDep, game_id: str, seed: str, *, retry: bool) -> None:
    """Put a caller's seed in the vault before the game exists: 403 where chosen seeds are
    off, 409 when the id has a seed already (unless this may be a keyed retry: the id is
    derived from the caller's secret key, so the seed there is the one it chose before)."""
    if not gateway.allow_chosen_seeds:
        raise ApiError(
            403,
            "chosen_seeds_disabled",
            "This server deals every game from a secret seed; it does not take a chosen "
            "seed (test and tournament servers set RENATURE_ALLOW_CHOSEN_SEEDS=1).",
        )
    chosen = await RedisSeedVault(gateway.redis, gateway.layout).choose(game_id, seed)
    if not chosen and not retry:
        raise ApiError(409, "game_exists", "A game with this id exists already; retry.")


@router.get("/games/{game_id}", response_model=GameSummary, responses=errors(404, 422, 503))
async def game_summary(game_id: GameId, gateway: GatewayDep) -> GameSummary:
    """Public facts of a game: phase, whose turn it is, which seats are taken."""
    game, state = await gateway.games.played(game_id)
    table = game.table(state)
    return GameSummary(
        game_id=game_id,
        game=game.name,
        version=table.version,
        board=table.board,
        players=table.players,
        phase=table.phase,
        current_seat=table.current,
        seats_joined=[n for n, name in enumerate(table.names) if name is not None],
        seed=await gateway.tokens.seed_origin(game_id),
        seats=seats_of(table),
        open_seats=open_seats(table),
        seating=await Lobby(gateway.redis, gateway.layout).seating(game_id),
        clock=clock_of(game, state),
    )


@router.post(
    "/games/{game_id}/seats/{seat}",
    status_code=201,
    response_model=JoinResponse,
    responses=errors(400, 403, 404, 409, 422, 503, 504),
)
async def join_seat(
    game_id: GameId,
    seat: Annotated[int, Path(ge=0, le=MAX_SEAT)],
    body: JoinRequest,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKey = None,  # type: ignore[assignment]
) -> JoinResponse:
    """Take a seat. The token in the answer is shown once: keep it, it is the only way to
    act for the seat (only its SHA-256 is stored); so is the recovery code, which restores the
    seat on another device (``POST .../reclaim``). With ``id_token`` (a server with an identity
    provider) the seat is bound to that user. With an ``Idempotency-Key`` a retry gets the same
    seat, token and recovery code back."""
    played = await gateway.games.played(game_id)
    players = played.game.table(played.state).players
    if seat >= players:
        raise ApiError(
            404, "no_such_seat", f"There is no seat {seat} in this {players}-player game."
        )
    await Lobby(gateway.redis, gateway.layout).check_invitation(game_id, body.invite)
    user = None if body.id_token is None else await user_of(gateway, body.id_token)
    token, version, _ = await join(gateway, played, game_id, seat, body, idempotency_key)
    key = idempotency_key
    recovery = new_token() if key is None else recovery_for(key, game_id, seat)
    await gateway.recovery.bind(game_id, seat, recovery, user)
    return JoinResponse(
        game_id=game_id,
        seat=seat,
        token=token,
        recovery=recovery,
        bound=user is not None,
        version=version,
        seed=played.game.table(played.state).seed,
    )


@router.post(
    "/games/{game_id}/start",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 422, 503, 504),
)
async def start_game(game_id: GameId, credentials: Credentials, gateway: GatewayDep) -> Accepted:
    """Start the game once every seat is taken; any seated player may do it."""
    game = await gateway.games.game_of(game_id)
    host = await Lobby(gateway.redis, gateway.layout).is_host(game_id, credentials)
    seat = None if host else await gateway.seated(game_id, credentials)
    command_id = f"start:{seat}:{uuid.uuid4().hex}"
    envelope = CommandEnvelope(game_id, command_id, game.start_command(), seat, game.name)
    reply = await gateway.send(envelope)
    return accepted_or_raise(reply, command_id)
