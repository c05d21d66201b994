"""The raw ASGI move path (``gameserver.gateway.fast_moves``) answers exactly as the FastAPI
route does: two gateways on one Redis and one rules service, one with the fast path and one
without, each playing a game dealt from the same seed, get the same status, body and headers
for every request: a move, its retry, a refused move, another seat's command, a set-up
command, a malformed command, a wrong or missing token, an unknown game, bodies that do not
fit the schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import uvicorn

from devkit.redis_server import free_port
from devkit.waiting import eventually
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.fast_moves import FastMoves
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


def without_fast_path(app: Any) -> Any:
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FastMoves]
    return app


@pytest.fixture
async def gateways(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[tuple[str, str]]:
    """(base URL with the fast path, base URL without it), served by uvicorn."""
    apps = [
        create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0),
        without_fast_path(
            create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
        ),
    ]
    servers = []
    for app in apps:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=free_port(), log_level="warning", lifespan="on"
        )
        servers.append(uvicorn.Server(config))
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-fast")):
        tasks = [asyncio.create_task(server.serve()) for server in servers]
        await eventually(lambda: all(s.started for s in servers), "uvicorn serving", timeout=10)
        try:
            yield tuple(f"http://127.0.0.1:{s.config.port}" for s in servers)  # type: ignore[misc]  # two servers: a pair
        finally:
            for server in servers:
                server.should_exit = True
            await asyncio.gather(*tasks)


async def set_up(base: str) -> tuple[str, list[str], list[Any]]:
    """A two-seat game from a fixed seed: its id, the seat tokens, seat 0's legal commands."""
    async with GatewayClient(base) as client:
        game_id = await client.create_game(2, seed="fast-moves")
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
        await client.start(game_id, tokens[0])
        legal = await client.legal_actions(game_id, tokens[0])
        return game_id, tokens, [msgspec.to_builtins(action) for action in legal]


def requests(
    game_id: str, tokens: list[str], legal: list[Any]
) -> list[tuple[str, Any, dict[str, Any]]]:
    """(path, body or raw bytes, headers) of every case, in the order they are sent."""
    path = f"/games/{game_id}/commands"
    seat0 = {"authorization": f"Bearer {tokens[0]}"}
    seat1 = {"authorization": f"Bearer {tokens[1]}"}
    move = {"command_id": "m1", "command": legal[0]}
    return [
        (path, move, seat0),  # accepted
        (path, move, seat0),  # the retry: the same outcome, nothing appended
        (path, {"command_id": "m1", "command": legal[-1]}, seat0),  # id reused, other body
        (path, {"command_id": "m2", "command": legal[0]}, seat1),  # not seat 1's turn
        (path, {"command_id": "m3", "command": {**legal[0], "seat": 1}}, seat0),  # wrong seat
        (path, {"command_id": "m4", "command": {"type": "StartGame", "seat": 0}}, seat0),
        (path, {"command_id": "m5", "command": {"type": "NoSuchMove"}}, seat0),
        (path, {"command_id": "m6", "command": {"type": "EndTurn"}}, seat0),
        (path, move, {"authorization": "Bearer not-a-token"}),
        (path, move, {}),
        (path, move, {"authorization": "Basic abc"}),
        ("/games/no-such-game/commands", move, seat0),
        ("/games/bad:id/commands", move, seat0),
        (f"/games/{'g' * 65}/commands", move, seat0),
        (path, {"command_id": "bad id!", "command": legal[0]}, seat0),
        (path, {"command_id": "m7", "command": [1, 2]}, seat0),
        (path, {"command": legal[0]}, seat0),
        (path, b"{not json", seat0),
        (path, {"command_id": "m8", "command": legal[0], "extra": 1}, seat0),
    ]


async def answers(base: str) -> list[tuple[int, Any, str | None]]:
    game_id, tokens, legal = await set_up(base)
    out = []
    async with httpx.AsyncClient(base_url=base) as http:
        for path, body, headers in requests(game_id, tokens, legal):
            if isinstance(body, bytes):
                headers = {**headers, "content-type": "application/json"}
                response = await http.post(path, content=body, headers=headers)
            else:
                response = await http.post(path, json=body, headers=headers)
            text = response.text.replace(game_id, "<game>")
            out.append((response.status_code, text, response.headers.get("retry-after")))
    return out


async def test_the_fast_path_answers_every_request_as_the_route_does(
    gateways: tuple[str, str],
) -> None:
    fast, route = gateways
    fast_answers, route_answers = await answers(fast), await answers(route)
    for number, (got, want) in enumerate(zip(fast_answers, route_answers, strict=True)):
        assert got == want, f"request {number}"
    statuses = [status for status, _, _ in fast_answers]
    assert statuses[:2] == [200, 200]
    assert fast_answers[0] == fast_answers[1]
    assert {401, 403, 404, 409, 422} <= set(statuses)
