"""Which requests the raw move path serves itself and which it hands to FastAPI (the route),
with a stand-in gateway and a recording inner app (tests/integration/test_fast_moves.py
compares its answers with the route's on real services)."""

from __future__ import annotations

import json
import zlib
from collections.abc import MutableMapping
from types import SimpleNamespace
from typing import Any

from helpers import new_game, with_seat

from gameplatform import get_game
from gameserver.gateway.fast_moves import FastMoves
from gameserver.gateway.frontends import GZIP_MIN_BYTES
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.live_movers import Moves
from gameserver.runtime.bus import Reply
from renature import commands as c

TOKEN = "tok-0"


class StandInGateway:
    """Seat 0 of game ``g1`` holds ``TOKEN``; every command is accepted at version 7."""

    def __init__(self, cached: Any = None, refusal: str | None = None) -> None:
        self.sent: list[Any] = []
        self.refusal = refusal  # a rules service's refusal with this message, when given
        self.live = SimpleNamespace(moves=Moves())
        self.moving: list[dict[str, list[int]]] = []  # the seats moving at each command sent
        statuses = None if cached is None else get_game("renature").table(cached).statuses
        self.games = SimpleNamespace(
            game_of=self._game_of,
            cached=lambda game_id: cached,
            cached_statuses=lambda game_id: statuses,
        )

    async def _game_of(self, game_id: str) -> Any:
        return get_game("renature")

    async def seated(self, game_id: str, credentials: Any) -> int:
        if game_id != "g1":
            raise ApiError(404, "game_not_found", "No such game.")
        if credentials.credentials != TOKEN:
            raise ApiError(403, "invalid_token", "This token holds no seat in this game.")
        return 0

    async def send(self, envelope: Any) -> Reply:
        self.sent.append(envelope)
        self.moving.append({game: list(seats) for game, seats in self.live.moves.seats.items()})
        if self.refusal is not None:
            return Reply(
                envelope.game_id,
                envelope.command_id,
                "rejected",
                code="not_your_turn",
                message=self.refusal,
            )
        return Reply(
            game_id=envelope.game_id,
            command_id=envelope.command_id,
            status="accepted",
            version=7,
            first_version=7,
            last_version=7,
        )


async def call(
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    path: str = "/games/g1/commands",
    cached: Any = None,
    refusal: str | None = None,
) -> tuple[list[MutableMapping[str, Any]], list[bytes], StandInGateway]:
    gateway = StandInGateway(cached, refusal)
    inner: list[bytes] = []

    async def route(scope: Any, receive: Any, send: Any) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message["body"], message["more_body"]
        inner.append(body)

    app = SimpleNamespace(state=SimpleNamespace(gateway=gateway))
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "app": app}
    sent: list[MutableMapping[str, Any]] = []
    chunks = [{"type": "http.request", "body": body[:5], "more_body": True}]
    chunks.append({"type": "http.request", "body": body[5:], "more_body": False})

    async def receive() -> dict[str, Any]:
        return chunks.pop(0)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await FastMoves(route)(scope, receive, send)
    return sent, inner, gateway


JSON = (b"content-type", b"application/json")
BEARER = (b"authorization", f"Bearer {TOKEN}".encode())
MOVE = json.dumps({"command_id": "m1", "command": {"type": "EndTurn"}}).encode()


async def test_a_well_formed_move_is_served_without_the_route() -> None:
    sent, inner, gateway = await call(MOVE, [JSON, BEARER])
    assert inner == []
    assert sent[0]["status"] == 200
    assert json.loads(sent[1]["body"]) == {
        "game_id": "g1",
        "command_id": "m1",
        "version": 7,
        "first_version": 7,
        "last_version": 7,
    }
    (envelope,) = gateway.sent
    assert envelope.command_id == "seat0:m1"
    assert envelope.seat == 0
    assert gateway.moving == [{"g1": [0]}]  # the seat moved while its command was in flight
    assert gateway.live.moves.seats == {}  # and no longer once answered (live_movers)


async def test_a_move_from_a_seat_a_bot_plays_takes_the_seat_back_first() -> None:
    """The cached state alone is looked at: seat 0 timed out, a bot plays it."""
    bot_played = with_seat(new_game(players=2), 0, status="bot")
    sent, _, gateway = await call(MOVE, [JSON, BEARER], cached=bot_played)
    assert sent[0]["status"] == 200
    reclaim, move = gateway.sent
    assert reclaim.command == c.ReclaimSeat(0)
    assert reclaim.seat == 0
    assert move.command == c.EndTurn(0)
    assert move.command_id == "seat0:m1"
    _, _, gateway = await call(MOVE, [JSON, BEARER], cached=new_game(players=2))
    assert [envelope.command for envelope in gateway.sent] == [c.EndTurn(0)]


async def test_refusals_are_the_error_shape_and_send_nothing() -> None:
    start = json.dumps({"command_id": "m2", "command": {"type": "StartGame"}}).encode()
    for body, headers, status, code in (
        (MOVE, [JSON, (b"authorization", b"Bearer wrong")], 403, "invalid_token"),
        (start, [JSON, BEARER], 403, "not_a_seat_command"),
    ):
        sent, inner, gateway = await call(body, headers)
        assert inner == []
        assert gateway.sent == []
        assert sent[0]["status"] == status
        assert json.loads(sent[1]["body"])["error"]["code"] == code


async def test_an_answer_as_long_as_gzip_takes_is_gzipped_as_the_route_s_would_be() -> None:
    """The raw path sits in front of gzip (wiring.py): a short answer is sent as it is, as
    gzip would leave it; one of gzip's minimum or longer goes through gzip all the same."""
    gzip = (b"accept-encoding", b"gzip")
    sent, _, _ = await call(MOVE, [JSON, BEARER, gzip], refusal="Not your turn.")
    assert dict(sent[0]["headers"]).get(b"content-encoding") is None
    assert json.loads(sent[1]["body"])["error"]["message"] == "Not your turn."
    # Messages are cut to 400 characters (http_errors.MAX_MESSAGE); escaped in JSON, a message
    # quoting what a client sent may still be longer than gzip's minimum.
    long = "\x01" * 400
    sent, _, _ = await call(MOVE, [JSON, BEARER, gzip], refusal=long)
    headers = dict(sent[0]["headers"])
    assert (sent[0]["status"], headers[b"content-encoding"]) == (409, b"gzip")
    assert headers[b"vary"] == b"Accept-Encoding"
    assert json.loads(zlib.decompress(sent[1]["body"], 31))["error"]["message"] == long
    sent, _, _ = await call(MOVE, [JSON, BEARER], refusal=long)  # a client without gzip
    assert len(sent[1]["body"]) > GZIP_MIN_BYTES
    assert json.loads(sent[1]["body"])["error"]["message"] == long


async def test_anything_else_reaches_the_route_with_its_whole_body() -> None:
    cases = [
        (MOVE, [JSON]),  # no token: the route answers 401
        (MOVE, [JSON, (b"authorization", b"Basic abc")]),
        (MOVE, [BEARER]),  # no content type
        (b'{"command_id": "bad id", "command": {}}', [JSON, BEARER]),
        (b'{"command_id": "m1", "command": []}', [JSON, BEARER]),
        (b"{not json at all", [JSON, BEARER]),
    ]
    for body, headers in cases:
        sent, inner, gateway = await call(body, headers)
        assert inner == [body]
        assert sent == []
        assert gateway.sent == []
    sent, inner, _ = await call(MOVE, [JSON, BEARER], path="/games/g1/commandsX")
    assert sent == []
    assert inner == [MOVE]
