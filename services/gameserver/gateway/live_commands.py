"""Commands over the live WebSocket: one persistent connection carries a seat's moves, their
answers and every event of the game.

A seated client (``/games/{id}/live?token=...``) sends a text message per command::

    {"command_id": "m12", "command": {"type": "EndTurn"},
     "events": false, "view": false, "legal_actions": false}

and gets one answer on the same socket, in the order the commands were sent::

    {"answer": {"command_id": "m12", "status": "accepted", "version": 57,
                "first_version": 56, "last_version": 57},
     "events": [...], "view": {...}, "legal_actions": [...]}
    {"answer": {"command_id": "m12", "status": "rejected", "http_status": 409,
                "error": {"code": "not_your_turn", "message": "..."}}}

``events``, ``view`` and ``legal_actions`` are added only when asked for: the command's own
events as the seat may see them, the seat's view and its legal commands after the command.
Every event of the game is pushed on the socket anyway (``gameserver.gateway.live_socket``),
so a client that renders the pushes needs none of them. The answer is exactly the HTTP
route's (``POST /games/{id}/commands``): the same checks, the same command id namespace (a
command sent over both with one id is one command), the same codes; ``http_status`` is the
status the route would have answered. Spectators (no token) may send nothing: every message
is answered ``not_seated``.
"""

from __future__ import annotations

import contextlib
import functools
import re
from typing import NamedTuple

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from gameplatform.interface import JsonValue
from gameserver.gateway.command_relay import bus_command_id, relay_move
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.http_errors import ApiError, bounded
from gameserver.gateway.live_answers import Riding
from gameserver.gateway.live_frames import send_texts

COMMAND_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")
MAX_MESSAGE_BYTES = 65_536


class LiveCommand(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    command_id: str
    command: dict[str, JsonValue]
    events: bool = False
    view: bool = False
    legal_actions: bool = False


_decoder = msgspec.json.Decoder(LiveCommand)
_encoder = msgspec.json.Encoder()


def _refusal(command_id: str, error: ApiError) -> bytes:
    return _encoder.encode(
        {
            "answer": {
                "command_id": command_id,
                "status": "rejected",
                "http_status": error.status,
                "error": {"code": error.code, "message": bounded(error.message, 400)},
            }
        }
    )


class Answer(NamedTuple):
    """A message's answer (JSON) and, where it accepted a command, the command's last event."""

    text: bytes
    last_version: int | None


async def answer(
    gateway: Gateway,
    game_id: str,
    seat: int | None,
    text: str | bytes,
    riding: Riding | None = None,
) -> Answer:
    """The answer to one message of a live channel; never raises an `ApiError`. The command
    is told to ``riding`` (`Riding.expect`) before it goes to the rules service."""
    command_id = ""
    try:
        if len(text) > MAX_MESSAGE_BYTES:
            raise ApiError(413, "body_too_large", f"At most {MAX_MESSAGE_BYTES} bytes a message.")
        try:
            message = _decoder.decode(text)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise ApiError(422, "malformed_request", f"Malformed message: {error}") from error
        command_id = message.command_id
        if not COMMAND_ID.match(command_id):
            raise ApiError(
                422, "malformed_request", "command_id: 1 to 128 of letters, digits, . _ ~ -"
            )
        if seat is None:
            raise ApiError(403, "not_seated", "Open the live channel with your seat's token.")
        if riding is not None:
            riding.expect(bus_command_id(seat, command_id))
        accepted, game = await relay_move(gateway, game_id, seat, command_id, message.command)
        out: dict[str, JsonValue] = {
            "answer": {
                "command_id": command_id,
                "status": "accepted",
                "version": accepted.version,
                "first_version": accepted.first_version,
                "last_version": accepted.last_version,
            }
        }
        if message.events:
            events = await gateway.games.events(game_id, accepted.first_version - 1)
            count = accepted.last_version - accepted.first_version + 1
            out["events"] = [game.visible_event(event, seat) for event in events[:count]]
        if message.view or message.legal_actions:
            state = await gateway.games.state(game_id)
            if message.view:
                out["view"] = game.view(state, seat)
            if message.legal_actions:
                out["legal_actions"] = game.legal_actions(state, seat)
        return Answer(_encoder.encode(out), accepted.last_version)
    except ApiError as error:
        return Answer(_refusal(command_id, error), None)


GRACE_S = 5.0
"""A channel closing under a command in flight (its game just ended: the last move's answer
may come after the GameEnded push, `HOLD_S` past it) sends that answer first, waiting this long
at most (`live_socket.serve_websocket`)."""


LOST = "This token no longer holds its seat (it was reclaimed on another device)."


async def _holds(gateway: Gateway, game_id: str, token: str) -> bool:
    """Whether the socket's token still holds a seat (the token cache answers from memory)."""
    return await gateway.tokens.seat_of(game_id, token) is not None


async def serve_commands(
    websocket: WebSocket,
    gateway: Gateway,
    game_id: str,
    seat: int | None,
    token: str | None,
    riding: Riding,
) -> None:
    """Answer the socket's messages one after the other until the client goes away, or until
    its ``token`` no longer holds ``seat`` (the seat was reclaimed elsewhere): then one error
    frame, ``invalid_token``, and close code 4403. An accepted command's answer goes in the
    write of its events' pushes (``riding``, shared with `pump`): written here, after them,
    where they wait for it."""
    write = functools.partial(send_texts, websocket)  # the pushes that waited, the answer

    async def reply(text: str | bytes) -> None:
        try:
            made, last_version = await answer(gateway, game_id, seat, text, riding)
        except BaseException:
            riding.failed()  # the pushes wait no longer
            raise
        sent = made.decode()
        if not await riding.hand_over(sent, last_version, write):
            await write([sent])  # else it went with its move's pushes

    def moving() -> contextlib.AbstractContextManager[None]:
        """The seat moves until its answer is on its way: the game's other channels on the
        worker get the move's events after it (`live_movers`)."""
        if seat is None:
            return contextlib.nullcontext()
        return gateway.live.moves.moving(game_id, seat)

    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if seat is not None and token is not None and not await _holds(gateway, game_id, token):
                await websocket.send_json({"error": {"code": "invalid_token", "message": LOST}})
                await websocket.close(code=4403)
                return
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            with riding.answering(), moving():  # a closing channel waits (`Riding.settled`)
                await reply(text)
    except WebSocketDisconnect:
        return
