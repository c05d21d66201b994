"""The players' move path without the framework: ``POST /games/{id}/commands`` as raw ASGI.

`FastMoves` is an ASGI middleware of the gateway: the limits (body size, JSON depth, rate
limits), the security headers, the client's address and CORS are in front of it, and a
well-formed move skips FastAPI's routing, dependency injection, pydantic validation and
response serialisation (measured at about half the gateway's CPU per move). It also sits in
front of the middlewares a move's answer never needs (`wiring.py`): the ETags of finished games
(GETs only), the ``Allow`` of 405s (a move is never one) and gzip, which leaves an answer
shorter than its minimum as it is (an answer that long goes through gzip all the same, so
every answer is the route's, byte for byte); passing those three cost about 5% of the
gateway's CPU per move over HTTP in `make bench`. The body is decoded with
msgspec and the seat found in the token cache; then the command goes through exactly the
route's code (`command_relay.relay_move`, what `relay` runs: the same checks, the same command
id namespace, the same refusals), and the answer is the route's own body (encoded by msgspec),
status and headers.

Anything else falls through to FastAPI with its body replayed: another method or path, a game
id ``GameId`` refuses, a body that is not a JSON object of ``command_id`` and ``command`` as the
schema wants them, no ``Bearer`` token. So every malformed request gets the route's answer
(400, 401, 422 with pydantic's description), and the route stays in the OpenAPI document.
"""

from __future__ import annotations

import contextlib
import re

import msgspec
from fastapi.security import HTTPAuthorizationCredentials
from redis import exceptions as redis_errors
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from eventstore import StoreUnavailableError
from gameplatform.interface import JsonValue
from gameserver.gateway.command_relay import relay_move
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.frontends import GZIP_MIN_BYTES
from gameserver.gateway.http_errors import ApiError, error_body
from gameserver.gateway.request_limits import _replay as replay_body
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

MOVE_PATH = re.compile(r"/games/([^/:{}\s]{1,64})/commands")
"""The route's path, with a game id that fits ``GameId`` (another is the route's 422)."""
COMMAND_ID = re.compile(r"[A-Za-z0-9._~-]{1,128}")
"""``CommandRequest.command_id``'s constraints, matched in full."""


class MoveBody(msgspec.Struct, frozen=True):
    """``CommandRequest`` (unknown fields ignored, as pydantic does)."""

    command_id: str
    command: dict[str, JsonValue]


_decoder = msgspec.json.Decoder(MoveBody)
_encoder = msgspec.json.Encoder()
_JSON = (b"content-type", b"application/json")


class FastMoves:
    """ASGI middleware serving well-formed moves itself (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        path = MOVE_PATH.fullmatch(scope["path"])
        token = _bearer(scope) if path is not None else None
        if path is None or token is None or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        body, disconnected = await _read_body(receive)
        if disconnected:  # the client went away before sending its body: nothing to answer
            return
        move = _decoded(body)
        if move is None:
            await self.app(scope, replay_body(body, receive), send)
            return
        gateway: Gateway = scope["app"].state.gateway
        with contextlib.ExitStack() as moving:  # the game's other channels wait (live_movers)
            status, answer, headers = await _answer(gateway, path.group(1), token, move, moving)

            async def respond(scope: Scope, receive: Receive, send: Send) -> None:
                length = (b"content-length", str(len(answer)).encode())
                start = {"type": "http.response.start", "status": status}
                await send({**start, "headers": [_JSON, length, *headers]})
                await send({"type": "http.response.body", "body": answer})

            if len(answer) >= GZIP_MIN_BYTES:  # as the route's would be: gzip decides
                await GZipMiddleware(respond, minimum_size=GZIP_MIN_BYTES)(scope, receive, send)
            else:
                await respond(scope, receive, send)


async def _answer(
    gateway: Gateway, game_id: str, token: str, move: MoveBody, moving: contextlib.ExitStack
) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """(status, body, extra headers) of a move, as the route and its error handlers give; the
    seat is ``moving`` (`live_movers.Moves`) from before its command goes to the rules
    service until the stack is left (once the answer is written)."""
    try:
        seat = await gateway.seated(
            game_id, HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
        )
        moving.enter_context(gateway.live.moves.moving(game_id, seat))
        accepted, _ = await relay_move(gateway, game_id, seat, move.command_id, move.command)
    except ApiError as error:
        retry = [(b"retry-after", b"1")] if error.status == 503 else []
        return error.status, _encoder.encode(error_body(error.code, error.message)), retry
    except (StoreUnavailableError, redis_errors.ConnectionError, redis_errors.TimeoutError) as e:
        log.error("gateway_redis_unavailable", error=str(e) or repr(e))
        body = error_body("store_unavailable", "The game store cannot be reached; retry.")
        return 503, _encoder.encode(body), [(b"retry-after", b"1")]
    except Exception as error:  # the route's last-resort handler, the same answer
        log.error("gateway_internal_error", error=type(error).__name__, exc_info=error)
        body = error_body("internal_error", "The gateway failed; please retry.")
        return 500, _encoder.encode(body), []
    return 200, _encoder.encode(accepted), []


def _decoded(body: bytes) -> MoveBody | None:
    """The move, or None where the route's own validation must answer."""
    try:
        move = _decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return move if COMMAND_ID.fullmatch(move.command_id) else None


def _bearer(scope: Scope) -> str | None:
    """The token of a well-formed ``Authorization: Bearer <token>`` (as FastAPI's
    ``HTTPBearer`` reads it), or None where the route must answer."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token if scheme.lower() == "bearer" and token else None
    return None


def _is_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            media: bytes = value.split(b";")[0].strip().lower()
            return media == b"application/json"
    return False


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The whole body (`RequestLimits` in front has capped it), and whether the client
    disconnected instead."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", True
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), False
