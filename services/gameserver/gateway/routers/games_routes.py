"""Games and seats: create a game, read its public summary, take a seat, start it. Each route
reads its request, calls one use case (`gameserver.gateway.use_cases`) and answers its result;
a refusal is answered by its kind's status (`gameserver.gateway.http_errors`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Header, Path, Response

from gameserver.gateway.case_book import CasesDep
from gameserver.gateway.dependencies import Credentials, GameId, token_of
from gameserver.gateway.idempotency import IDEMPOTENCY_HEADER, KEY_PATTERN
from gameserver.gateway.lobby_entries import clock_of, seats_of
from gameserver.gateway.openapi import errors
from gameserver.gateway.schemas import (
    MAX_SEAT,
    Accepted,
    CreateGameRequest,
    CreateGameResponse,
    GameSummary,
    JoinRequest,
    JoinResponse,
)
from gameserver.gateway.use_cases.game_listing import open_seats
from gameserver.gateway.use_cases.seat_taking import SeatAsk

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
    cases: CasesDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,  # type: ignore[assignment]
) -> CreateGameResponse:
    """Create a game. Without ``seed`` the rules service deals from a secret random seed
    (revealed at the end); a ``seed`` is for tests, bots and tournaments. With an
    ``Idempotency-Key`` a retry creates nothing new and answers the same game; the key with
    another body is refused (422 ``idempotency_key_reused``), and so is a retry while the first
    request is still answered (409 ``idempotency_key_in_flight``)."""
    created = await cases.create_game(body, idempotency_key)
    response.headers["Location"] = f"/games/{created.game_id}"
    return CreateGameResponse(**asdict(created))


@router.get("/games/{game_id}", response_model=GameSummary, responses=errors(404, 422, 503))
async def game_summary(game_id: GameId, cases: CasesDep) -> GameSummary:
    """Public facts of a game: phase, whose turn it is, which seats are taken."""
    summary = await cases.listing.summary(game_id)
    table = summary.table
    return GameSummary(
        game_id=game_id,
        game=summary.game.name,
        version=table.version,
        board=table.board,
        players=table.players,
        phase=table.phase,
        current_seat=table.current,
        seats_joined=[n for n, name in enumerate(table.names) if name is not None],
        seed=summary.seed_origin,
        seats=seats_of(table),
        open_seats=open_seats(table),
        seating=summary.seating,
        clock=clock_of(summary.game, summary.state),
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
    cases: CasesDep,
    idempotency_key: IdempotencyKey = None,  # type: ignore[assignment]
) -> JoinResponse:
    """Take a seat. The token in the answer is shown once: keep it, it is the only way to
    act for the seat (only its SHA-256 is stored); so is the recovery code, which restores the
    seat on another device (``POST .../reclaim``). With ``id_token`` (a server with an identity
    provider) the seat is bound to that user. With an ``Idempotency-Key`` a retry gets the same
    seat, token and recovery code back."""
    ask = SeatAsk(
        name=body.name,
        invite=body.invite,
        id_token=body.id_token,
        request=body.model_dump_json().encode(),
    )
    return JoinResponse(**asdict(await cases.take_seat(game_id, seat, ask, idempotency_key)))


@router.post(
    "/games/{game_id}/start",
    response_model=Accepted,
    responses=errors(401, 403, 404, 409, 422, 503, 504),
)
async def start_game(game_id: GameId, credentials: Credentials, cases: CasesDep) -> Accepted:
    """Start the game once every seat is taken; any seated player may do it."""
    return Accepted(**asdict(await cases.seats.start(game_id, token_of(credentials))))
