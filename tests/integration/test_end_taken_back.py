"""A game whose end a crash took back is played to its end again, with the same seat tokens.

Under ``appendfsync everysec`` a crash may cost Redis its last second of writes. When that
second held a game's end, the services and the players go on from the state kept: every seat
token still holds its seat, the game can be finished, the tokens lapse after the end that stands
(`gateway.expiry`), and its audit and explanation are of that end's history, even where it ends
at the same version (`gateway.finished`). Redis really comes back without its last writes here:
a snapshot is saved before each move, and the server is killed and started again from the last
one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
from websockets.asyncio.client import connect

from devkit.redis_server import RedisServer
from eventstore import KeyLayout
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings, serving

pytestmark = pytest.mark.redis

TTL_S = 3600


@dataclass
class Stack:
    server: RedisServer
    client: GatewayClient
    app: Any
    url: str


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    with RedisServer(data_dir=tmp_path) as server:
        settings = gateway_settings(
            server.url, allow_chosen_seeds=True, token_ttl_after_end_s=TTL_S
        )
        app = create_app(settings, command_timeout=5.0)
        async with (
            serving(app, lifespan="auto") as address,
            RulesService(Settings.of(redis_url=server.url, consumer="rules-end")),
            GatewayClient(f"http://{address}") as client,
        ):
            yield Stack(server, client, app, f"http://{address}")


async def play_to_the_end(stack: Stack, game_id: str, tokens: list[str], snapshots: bool) -> int:
    """Moves of the seat on turn until the game is over (a snapshot before each, if asked):
    the last version."""
    while True:
        summary = await stack.client.summary(game_id)
        if summary["phase"] == "finished":
            return int(summary["version"])
        seat = summary["current_seat"]
        legal = [] if seat is None else await stack.client.legal_actions(game_id, tokens[seat])
        if not legal:  # the rules service's own finish is on its way
            await asyncio.sleep(0.05)
            continue
        if snapshots:
            with redis.Redis.from_url(stack.server.url) as sync:
                sync.save()
        await stack.client.send(game_id, tokens[seat], legal[-1])


def seats_ttl(stack: Stack, game_id: str) -> int:
    with redis.Redis.from_url(stack.server.url) as sync:
        return int(sync.ttl(KeyLayout().seats_key(game_id)))


async def test_an_end_taken_back_is_played_again_with_the_same_seats(stack: Stack) -> None:
    expiry = stack.app.state.gateway.token_expiry
    expiry.confirm_s = expiry.recheck_s = 0.2  # games seen are looked at again soon
    game_id = await stack.client.create_game(2, seed="end-taken-back")
    tokens = [await stack.client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    await stack.client.start(game_id, tokens[0])
    ended = await play_to_the_end(stack, game_id, tokens, snapshots=True)
    await asyncio.sleep(0.3)  # past recheck_s
    for token in tokens:  # the gateway sees the end: the tokens lapse an hour on
        assert await stack.client.legal_actions(game_id, token) == []
    assert 0 < seats_ttl(stack, game_id) <= TTL_S
    stack.server.stop(kill=True)  # a crash: Redis comes back from before the last move
    stack.server.start()
    summary = await stack.client.summary(game_id)
    assert summary["phase"] != "finished"
    assert summary["version"] < ended
    assert seats_ttl(stack, game_id) == -1  # the TTL went with the end
    await asyncio.sleep(0.3)  # past confirm_s: the gateway looks at the game again
    for token in tokens:  # every seat is still its token's
        await stack.client.legal_actions(game_id, token)
    again = await play_to_the_end(stack, game_id, tokens, snapshots=False)
    assert again >= summary["version"] + 1
    await asyncio.sleep(0.3)  # past recheck_s: the gateway looks at the running game again
    for token in tokens:
        assert await stack.client.legal_actions(game_id, token) == []
    assert 0 < seats_ttl(stack, game_id) <= TTL_S  # the tokens lapse after the end that stands


async def test_the_audit_of_an_end_played_again_is_of_the_history_that_stands(
    stack: Stack,
) -> None:
    """Goofspiel ends at the same version whatever is bid: a gateway that had explained the
    first end must not serve that explanation for the second."""
    async with GatewayClient(stack.url, game="goofspiel") as client:
        game_id = await client.create_game(2)
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
        await client.start(game_id, tokens[0])
        moves = await bids(client, game_id, tokens, pick=0, save_at=4, url=stack.server.url)
        first = await explained(stack.url, client, game_id)
        watched = await spectated(stack.url, game_id)  # a finished game's frames, kept
        stack.server.stop(kill=True)  # back to the snapshot, four bids before the end
        stack.server.start()
        assert await bids(client, game_id, tokens, pick=-1) < moves
        second = await explained(stack.url, client, game_id)
        assert second["version"] == first["version"]
        assert second["body"] != first["body"]  # other bids, other points
        again = await spectated(stack.url, game_id)
        assert again != watched
        shown = await client.events(game_id)  # the events that stand, as a spectator sees them
        assert [frame["version"] for frame in again] == [event.version for event in shown]
        assert again == [json.loads(msgspec.json.encode(event)) for event in shown]
        # A gateway that never saw the first end says the same.
        fresh = create_app(gateway_settings(stack.server.url), command_timeout=5.0)
        async with serving(fresh, lifespan="auto") as other:
            assert await explained(f"http://{other}", client, game_id) == second


async def bids(
    client: GatewayClient,
    game_id: str,
    tokens: list[str],
    pick: int,
    save_at: int | None = None,
    url: str = "",
) -> int:
    """Moves until the game is over, the first seat's ``pick``-th legal one (its lowest or
    highest bid), the other's first (its lowest); a snapshot when the first seat has
    ``save_at`` cards left: the moves made."""
    made = 0
    while (await client.summary(game_id))["phase"] != "finished":
        for token in tokens:
            legal = await client.legal_actions(game_id, token)
            if not legal:
                continue
            left = len(legal)  # a bid per card in hand
            if save_at is not None and left == save_at and token == tokens[0]:
                with redis.Redis.from_url(url) as sync:
                    sync.save()
            await client.send(game_id, token, legal[pick if token == tokens[0] else 0])
            made += 1
        await asyncio.sleep(0.01)
    return made


async def explained(url: str, client: GatewayClient, game_id: str) -> dict[str, Any]:
    """A finished game's explanation from the gateway at ``url``, with the game's version."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await http.get(f"/games/{game_id}/explanation")
    response.raise_for_status()
    version = (await client.summary(game_id))["version"]
    return {"version": version, "body": response.json()}


async def spectated(url: str, game_id: str) -> list[dict[str, Any]]:
    """Every frame a spectator's WebSocket on a finished game gets before it is closed."""
    frames = []
    async with connect(f"{url.replace('http', 'ws', 1)}/games/{game_id}/live") as ws:
        async for message in ws:
            frames.append(json.loads(message))
    assert ws.close_code == 1000
    return frames
