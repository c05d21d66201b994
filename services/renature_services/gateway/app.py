"""The gateway application: HTTP and WebSocket endpoints for frontends (docs/http-api.md).

Every handler is a thin adapter: authenticate the seat, turn the request into a
``CommandEnvelope`` for the rules service and await its ``Reply``, or replay the game's stream
with the pure core and show the caller what its seat may see. Rules are never decided here.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import msgspec
from fastapi import Depends, FastAPI, Path, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from redis.asyncio import BlockingConnectionPool, Redis

from renature import commands as c
from renature import events as e
from renature.audit import AuditReport, audit
from renature.components import COLOURS
from renature.explain import Explanation, explain
from renature.rules import legal_actions
from renature.state import GameState
from renature.view import GameView, view, visible_event
from renature_services.bus import CommandEnvelope, Reply
from renature_services.gateway import sender as senders
from renature_services.gateway.errors import ApiError, install_error_handlers, rule_error_status
from renature_services.gateway.games import GameStates
from renature_services.gateway.live import pump_events
from renature_services.gateway.openapi import Bodies, errors
from renature_services.gateway.openapi import install as install_openapi
from renature_services.gateway.perspective import encode_state, perspective
from renature_services.gateway.schemas import (
    Accepted,
    CommandRequest,
    CreateGameRequest,
    CreateGameResponse,
    GameSummary,
    JoinRequest,
    JoinResponse,
    MsgspecResponse,
)
from renature_services.gateway.seats import SeatTokens, new_token
from renature_services.gateway.seeds import choose_seed, forget_seed
from renature_services.logging import bind_command, get_logger
from renature_services.projectors.score import ScoreModel
from renature_services.settings import Settings
from renature_store import DEFAULT_PARTITIONS, DEFAULT_PREFIX, MAX_VERSION, RedisEventStore

log = get_logger("renature.gateway")

SET_UP_COMMANDS = frozenset({"CreateGame", "JoinGame", "StartGame", "FinishGame"})
"""Issued by the gateway's own endpoints or by the rules service, never by a player."""
DEFAULT_COMMAND_TIMEOUT = 10.0

bearer = HTTPBearer(auto_error=False, description="The seat token returned by joining a seat")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
GameId = Annotated[str, Path(description="The game id returned by POST /games")]


class Gateway:
    """What the handlers share: Redis, the store, seat tokens, cached states, the sender."""

    def __init__(
        self,
        redis: Redis,
        sender: senders.CommandSender,
        command_timeout: float,
        store: RedisEventStore,
    ) -> None:
        self.redis = redis
        self.store = store
        self.tokens = SeatTokens(redis, self.store.layout)
        self.games = GameStates(self.store)
        self.sender = sender
        self.command_timeout = command_timeout

    async def send(self, envelope: CommandEnvelope) -> Reply:
        """Send a command and await its reply; 504 when the rules service does not answer in
        time, 503 when it cannot be reached. The command may still be applied after a timeout:
        retrying with the same command id is safe and returns its one outcome."""
        kind = type(envelope.command).__name__  # never the command itself (it may hold a seed)
        with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
            try:
                reply = await self.sender.send(envelope, self.command_timeout)
            except TimeoutError as error:  # includes rules_client.CommandTimeout
                log.warning("gateway_command_timeout", command=kind)
                raise ApiError(
                    504, "rules_timeout", "The rules service did not answer in time; retry."
                ) from error
            except senders.SenderUnavailableError as error:
                log.error("gateway_rules_unavailable", command=kind, error=str(error))
                raise ApiError(
                    503, "rules_unavailable", "The rules service cannot be reached; retry."
                ) from error
            log.info("gateway_command", command=kind, status=reply.status, code=reply.code)
        return reply

    async def seat_of(self, game_id: str, credentials: HTTPAuthorizationCredentials | None) -> int:
        """The seat the bearer token belongs to: 401 without a token, 403 for a wrong one."""
        if credentials is None or not credentials.credentials:
            raise ApiError(401, "missing_token", "Send your seat token as 'Bearer <token>'.")
        seat = await self.tokens.seat_of(game_id, credentials.credentials)
        if seat is None:
            raise ApiError(403, "invalid_token", "This token holds no seat in this game.")
        return seat

    async def viewer_of(
        self, game_id: str, credentials: HTTPAuthorizationCredentials | None
    ) -> int | None:
        """The caller's seat, or None for a spectator (no token); 403 for a wrong token."""
        return None if credentials is None else await self.seat_of(game_id, credentials)


def accepted_or_raise(reply: Reply, client_command_id: str) -> Accepted:
    """The reply as a 200 body, or the rule error as the fitting status."""
    if reply.status == "accepted":
        return Accepted(
            game_id=reply.game_id,
            command_id=client_command_id,
            version=reply.version,
            first_version=reply.first_version,
            last_version=reply.last_version,
        )
    code = reply.code or "rule_broken"
    raise ApiError(rule_error_status(code), code, reply.message or "The command was refused.")


def seat_command(payload: dict[str, Any], seat: int) -> c.SeatCommand:
    """Decode a client's command for ``seat``: refuse set-up commands (403), fill in a missing
    seat, refuse another seat's command (403), report a malformed one (422)."""
    kind = payload.get("type")
    if isinstance(kind, str) and kind in SET_UP_COMMANDS:
        raise ApiError(
            403,
            "not_a_seat_command",
            f"{kind} is not a player's command; "
            "games are created, joined and started through their own endpoints.",
        )
    if "seat" not in payload:
        payload = {**payload, "seat": seat}
    try:
        command: c.SeatCommand = msgspec.convert(json_integers(payload), c.SeatCommand)
    except msgspec.ValidationError as error:
        raise ApiError(422, "invalid_command", f"Malformed command: {error}") from error
    if command.seat != seat:
        raise ApiError(403, "wrong_seat", "You can only act for your own seat.")
    return command


def json_integers(value: Any) -> Any:
    """``value`` with every whole float as an int: JSON has one kind of number, and 142.0 is
    the integer 142 to JSON Schema too (msgspec would refuse it where an int is due)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: json_integers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_integers(item) for item in value]
    return value


REDIS_CONNECTIONS = 200
"""Connections the gateway opens to Redis at most (requests beyond that wait their turn)."""


def create_app(
    redis_url: str,
    *,
    sender: senders.CommandSender | None = None,
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
    prefix: str = DEFAULT_PREFIX,
    partitions: int = DEFAULT_PARTITIONS,
    allow_chosen_seeds: bool = False,
) -> FastAPI:
    """The gateway for the Redis at ``redis_url``. ``sender`` replaces the rules-service client
    (tests); by default commands go over the bus through ``renature_services.rules_client``.
    ``prefix`` and ``partitions`` must match the other services (they are the key layout).
    ``allow_chosen_seeds`` lets ``POST /games`` take a seed: whoever chooses the seed knows
    every hand, so only test, bot and tournament servers switch it on."""
    # Requests wait for a free connection rather than fail when many are in flight at once.
    pool = BlockingConnectionPool.from_url(
        redis_url, max_connections=REDIS_CONNECTIONS, timeout=command_timeout
    )
    redis = Redis.from_pool(pool)
    store = RedisEventStore(redis, prefix=prefix, partitions=partitions)
    bus_sender: senders.BusSender | None = None
    if sender is None:
        sender = bus_sender = senders.BusSender(redis)
    gateway = Gateway(redis, sender, command_timeout, store)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if bus_sender is not None:
                await bus_sender.aclose()
            await redis.aclose()

    app = FastAPI(
        title="Renature gateway",
        version="1",
        description="Create, join and play Renature games; see docs/http-api.md.",
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    install_error_handlers(app)
    bodies = Bodies()
    # /state sends a GameState without its static board (it is loaded by board_id).
    install_openapi(app, bodies, strip={"GameState": ["board"]})

    @app.get("/healthz", tags=["service"], responses=errors(503))
    async def health() -> dict[str, str]:
        """Ready when Redis answers (used by process supervisors and the e2e tests)."""
        try:
            await redis.ping()
        except Exception as error:
            raise ApiError(503, "redis_unavailable", "Redis does not answer.") from error
        return {"status": "ok"}

    @app.post(
        "/games",
        status_code=201,
        response_model=CreateGameResponse,
        tags=["games"],
        responses=errors(400, 403, 409, 422, 503, 504),
    )
    async def create_game(body: CreateGameRequest) -> CreateGameResponse:
        """Create a game. Without ``seed`` the rules service deals from a secret random seed
        (revealed at the end); a ``seed`` is for tests, bots and tournaments."""
        game_id = uuid.uuid4().hex
        if body.seed is not None and not allow_chosen_seeds:
            raise ApiError(
                403,
                "chosen_seeds_disabled",
                "This server deals every game from a secret seed; it does not take a chosen "
                "seed (test and tournament servers set RENATURE_ALLOW_CHOSEN_SEEDS=1).",
            )
        if body.seed is not None and not await choose_seed(
            redis, gateway.store.layout, game_id, body.seed
        ):
            raise ApiError(409, "game_exists", "A game with this id exists already; retry.")
        # The seed stays blank on the bus: the rules service takes it from its vault.
        command = c.CreateGame(game_id=game_id, players=body.players, seed="", board=body.board)
        reply = await gateway.send(CommandEnvelope(game_id, "create", command, None))
        if reply.status == "rejected" and body.seed is not None:
            await forget_seed(redis, gateway.store.layout, game_id)  # no seed for no game
        result = accepted_or_raise(reply, "create")
        await gateway.tokens.mark_created(game_id, chosen_seed=body.seed is not None)
        return CreateGameResponse(
            game_id=game_id,
            players=body.players,
            board=body.board,
            version=result.version,
            seed="chosen" if body.seed is not None else "secret",
        )

    @app.get(
        "/games/{game_id}",
        response_model=GameSummary,
        tags=["games"],
        responses=errors(404, 422, 503),
    )
    async def game_summary(game_id: GameId) -> GameSummary:
        """Public facts of a game: phase, whose turn it is, which seats are taken."""
        state = await gateway.games.state(game_id)
        return GameSummary(
            game_id=game_id,
            version=state.version,
            board=state.board_id,
            players=state.players,
            phase=state.phase,
            current_seat=state.current if state.current >= 0 else None,
            seats_joined=[n for n, s in enumerate(state.seats) if s.name is not None],
            seed=await gateway.tokens.seed_origin(game_id),
        )

    @app.post(
        "/games/{game_id}/seats/{seat}",
        status_code=201,
        response_model=JoinResponse,
        tags=["games"],
        responses=errors(400, 404, 409, 422, 503, 504),
    )
    async def join_seat(
        game_id: GameId, seat: Annotated[int, Path(ge=0, le=3)], body: JoinRequest
    ) -> JoinResponse:
        """Take a seat. The token in the answer is shown once: keep it, it is the only way to
        act for the seat (only its SHA-256 is stored)."""
        state = await gateway.games.state(game_id)
        if seat >= state.players:
            raise ApiError(
                404,
                "no_such_seat",
                f"There is no seat {seat} in this {state.players}-player game.",
            )
        if state.seats[seat].name is not None:
            raise ApiError(409, "seat_taken", f"Seat {seat} is taken already.")
        token = new_token()
        if not await gateway.tokens.claim(game_id, seat, token):
            raise ApiError(409, "seat_taken", f"Seat {seat} is taken already.")
        command_id = f"join:{seat}:{uuid.uuid4().hex}"
        try:
            reply = await gateway.send(
                CommandEnvelope(game_id, command_id, c.JoinGame(seat, body.name), seat)
            )
            result = accepted_or_raise(reply, command_id)
        except ApiError as error:
            if error.status != 504:  # after a timeout the join may still happen: keep the claim
                await gateway.tokens.release(game_id, seat, token)
            raise
        return JoinResponse(game_id=game_id, seat=seat, token=token, version=result.version)

    @app.post(
        "/games/{game_id}/start",
        response_model=Accepted,
        tags=["games"],
        responses=errors(401, 403, 404, 409, 422, 503, 504),
    )
    async def start_game(game_id: GameId, credentials: Credentials) -> Accepted:
        """Start the game once every seat is taken; any seated player may do it."""
        await gateway.games.require(game_id)
        seat = await gateway.seat_of(game_id, credentials)
        command_id = f"start:{seat}:{uuid.uuid4().hex}"
        reply = await gateway.send(CommandEnvelope(game_id, command_id, c.StartGame(), seat))
        return accepted_or_raise(reply, command_id)

    @app.post(
        "/games/{game_id}/commands",
        response_model=Accepted,
        tags=["play"],
        responses=errors(400, 401, 403, 404, 409, 422, 503, 504),
    )
    async def send_command(
        game_id: GameId, body: CommandRequest, credentials: Credentials
    ) -> Accepted:
        """Play a move for your seat. 409 when the rules refuse it (``not_your_turn``,
        ``illegal_placement``, ...), 422 for ``invalid_command``; nothing is appended then."""
        await gateway.games.require(game_id)
        seat = await gateway.seat_of(game_id, credentials)
        command = seat_command(body.command, seat)
        # Command ids are namespaced per seat, so one seat can never pre-empt (or read the
        # outcome of) another seat's command by guessing its id.
        envelope = CommandEnvelope(game_id, f"seat{seat}:{body.command_id}", command, seat)
        return accepted_or_raise(await gateway.send(envelope), body.command_id)

    @app.get(
        "/games/{game_id}/view",
        response_class=MsgspecResponse,
        tags=["read"],
        responses={**bodies.body(GameView, "Your seat's view"), **errors(401, 403, 404, 422, 503)},
    )
    async def seat_view(game_id: GameId, credentials: Credentials) -> MsgspecResponse:
        """The game as your seat sees it: your hand, nobody else's."""
        await gateway.games.require(game_id)
        seat = await gateway.seat_of(game_id, credentials)
        return MsgspecResponse(view(await gateway.games.state(game_id), seat))

    @app.get(
        "/games/{game_id}/spectator",
        response_class=MsgspecResponse,
        tags=["read"],
        responses={**bodies.body(GameView, "The spectator view"), **errors(404, 422, 503)},
    )
    async def spectator_view(game_id: GameId) -> MsgspecResponse:
        """The game as a spectator sees it: no hands, no token backs."""
        return MsgspecResponse(view(await gateway.games.state(game_id), None))

    @app.get(
        "/games/{game_id}/state",
        response_class=MsgspecResponse,
        tags=["read"],
        responses={
            **bodies.body(GameState, "Your seat's perspective of the state"),
            **errors(401, 403, 404, 422, 503),
        },
    )
    async def seat_state(game_id: GameId, credentials: Credentials) -> MsgspecResponse:
        """Your seat's own-perspective ``GameState`` (for bots using the pure core): every
        secret your seat may not know is replaced by a stand-in (see docs/http-api.md)."""
        await gateway.games.require(game_id)
        seat = await gateway.seat_of(game_id, credentials)
        state = await gateway.games.state(game_id)
        return MsgspecResponse(encode_state(perspective(state, seat)))

    @app.get(
        "/games/{game_id}/legal-actions",
        response_class=MsgspecResponse,
        tags=["read"],
        responses={
            **bodies.body(list[c.SeatCommand], "Every command your seat may send now"),
            **errors(401, 403, 404, 422, 503),
        },
    )
    async def seat_legal_actions(game_id: GameId, credentials: Credentials) -> MsgspecResponse:
        """Every command your seat may send now (empty when it is not your turn)."""
        await gateway.games.require(game_id)
        seat = await gateway.seat_of(game_id, credentials)
        return MsgspecResponse(legal_actions(await gateway.games.state(game_id), seat))

    @app.get(
        "/games/{game_id}/events",
        response_class=MsgspecResponse,
        tags=["read"],
        responses={
            **bodies.body(list[e.AnyEvent], "The events after `after`, as you may see them"),
            **errors(403, 404, 422, 503),
        },
        # The token is optional here: without one the events are shown as to a spectator.
        openapi_extra={"security": [{}]},
    )
    async def game_events(
        game_id: GameId,
        credentials: Credentials,
        after: Annotated[
            int, Query(ge=0, le=MAX_VERSION, description="Only events after this version")
        ] = 0,
    ) -> MsgspecResponse:
        """The game's events after ``after``, with the secrets your seat (or a spectator) may
        not see blanked out."""
        await gateway.games.require(game_id)
        viewer = await gateway.viewer_of(game_id, credentials)
        events = await gateway.games.events(game_id, after)
        return MsgspecResponse([visible_event(event, viewer) for event in events])

    @app.get(
        "/games/{game_id}/board",
        response_class=MsgspecResponse,
        tags=["read models"],
        responses={**bodies.body(GameView, "The board model"), **errors(404, 422, 503)},
    )
    async def board_model(game_id: GameId) -> MsgspecResponse:
        """The board projector's read model (the spectator view, as last projected; it may lag
        a few events behind ``/spectator``). ``X-Model-Version`` says which version it shows."""
        return await _read_model(gateway, game_id, "board")

    @app.get(
        "/games/{game_id}/scores",
        response_class=MsgspecResponse,
        tags=["read models"],
        responses={**bodies.body(ScoreModel, "The score model"), **errors(404, 422, 503)},
    )
    async def score_model(game_id: GameId) -> MsgspecResponse:
        """The score projector's read model: scores with every award and its reason."""
        return await _read_model(gateway, game_id, "score")

    @app.get(
        "/games/{game_id}/audit",
        response_class=MsgspecResponse,
        tags=["audit"],
        responses={**bodies.body(AuditReport, "The audit report"), **errors(404, 409, 422, 503)},
    )
    async def game_audit(game_id: GameId) -> MsgspecResponse:
        """The dispute audit of a finished game, from its stored events alone: the hash chain,
        every recorded command re-decided, the revealed seed against its commitment and the
        deal, the final scoring. ``ok`` says whether everything holds, ``first_bad`` names the
        first bad event. 409 ``game_not_finished`` before the end (the stream holds the hands)."""
        _, events = await _finished_game(gateway, game_id)
        return MsgspecResponse(audit(events))

    @app.get(
        "/games/{game_id}/explanation",
        response_class=MsgspecResponse,
        tags=["audit"],
        responses={**bodies.body(Explanation, "The explanation"), **errors(404, 409, 422, 503)},
    )
    async def game_explanation(
        game_id: GameId,
        seat: Annotated[
            str | None, Query(description="Only this colour's points (e.g. orange)")
        ] = None,
    ) -> MsgspecResponse:
        """Where every point of a finished game came from: one line per award with its rule
        and the running total, then scores, ranking and winners. 409 ``game_not_finished``
        before the end."""
        state, events = await _finished_game(gateway, game_id)
        seat_no = None
        if seat is not None:
            colours = [COLOURS[s.colour] for s in state.seats]
            if seat not in colours:
                raise ApiError(
                    422,
                    "no_such_seat",
                    f"No seat plays {seat!r} in this game; its colours are {', '.join(colours)}.",
                )
            seat_no = colours.index(seat)
        return MsgspecResponse(explain(events, seat_no))

    @app.websocket("/games/{game_id}/live")
    async def live(
        websocket: WebSocket,
        game_id: str,
        token: str | None = None,
        after: int = 0,
    ) -> None:
        """Each new event as this viewer may see it, in version order (see docs/http-api.md)."""
        await websocket.accept()
        try:
            if not 0 <= after <= MAX_VERSION:
                raise ApiError(
                    422, "malformed_request", f"after: a version from 0 to {MAX_VERSION}"
                )
            await gateway.games.require(game_id)
            credentials = (
                None
                if token is None
                else HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
            )
            viewer = await gateway.viewer_of(game_id, credentials)
        except ApiError as error:
            await websocket.send_json({"error": {"code": error.code, "message": error.message}})
            await websocket.close(code=4000 + error.status)
            return
        stream_key = gateway.store.layout.game_key(game_id)
        pump = asyncio.create_task(
            pump_events(redis, stream_key, viewer, after, websocket.send_text)
        )
        listen = asyncio.create_task(_until_disconnect(websocket))
        done, _ = await asyncio.wait({pump, listen}, return_when=asyncio.FIRST_COMPLETED)
        for task in (pump, listen):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if pump in done:  # the game ended (1000) or reading the stream failed (1011)
            failed = pump.exception() is not None
            if failed:
                log.error("live updates failed", game_id=game_id, error=str(pump.exception()))
            with contextlib.suppress(Exception):
                await websocket.close(code=1011 if failed else 1000)

    return app


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


async def _read_model(gateway: Gateway, game_id: str, name: str) -> MsgspecResponse:
    """A projector's model hash ``<prefix>:{pNN}:<name>:<game_id>`` = {version, model}."""
    await gateway.games.require(game_id)
    layout = gateway.store.layout
    key = f"{layout.base(layout.partition_of(game_id))}:{name}:{game_id}"
    version, model = await gateway.redis.hmget(key, ["version", "model"])
    if version is None or model is None:
        raise ApiError(404, "not_projected", f"The {name} of this game is not projected yet.")
    body = model if isinstance(model, bytes) else model.encode()
    return MsgspecResponse(body, headers={"X-Model-Version": _text(version)})


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _query_credentials(token: str | None) -> HTTPAuthorizationCredentials | None:
    """Browsers cannot set headers on a WebSocket: the token comes as a query parameter."""
    if token is None:
        return None
    return HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)


async def _until_disconnect(websocket: WebSocket) -> None:
    """Return when the client goes away (incoming messages are ignored)."""
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return


def gateway_of(request: Request) -> Gateway:
    """The app's shared `Gateway` (for extensions and tests)."""
    gateway: Gateway = request.app.state.gateway
    return gateway


def app_from_settings(settings: Settings) -> FastAPI:
    """The gateway configured like every other service: from the shared settings."""
    return create_app(
        settings.redis_url,
        prefix=settings.prefix,
        partitions=settings.partitions,
        allow_chosen_seeds=settings.allow_chosen_seeds,
    )
