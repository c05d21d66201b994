"""The live channels (WebSocket and Server-Sent Events) against a real Redis, the real rules
service and the gateway served by uvicorn: they stay up while a game is quiet for longer than
redis-py's 5 s socket timeout, resume without gaps or duplicates, close at once when nothing is
left, answer a bad ``after`` with 4422, and push a seat's view and legal actions on request."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from websockets.asyncio.client import connect

from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.dependencies import REDIS_CONNECTIONS
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.bus import CommandEnvelope
from gameserver.runtime.settings import Settings
from renature import commands as c
from support.gateway import gateway_settings, serving

pytestmark = pytest.mark.redis

IDLE_S = 6.5
"""Longer than redis-py's default socket timeout (5 s), which used to cut the live read."""


@dataclass
class Served:
    http: str
    ws: str
    client: GatewayClient
    app: Any


@pytest.fixture
async def served(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Served]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    async with (
        serving(app, lifespan="auto", ws_ping_interval=2) as address,
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-live")),
        GatewayClient(f"http://{address}") as client,
    ):
        yield Served(f"http://{address}", f"ws://{address}", client, app)


async def started(served: Served) -> tuple[str, list[str]]:
    game_id = await served.client.create_game(2, seed="live-seed")
    tokens = [await served.client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    await served.client.start(game_id, tokens[0])
    return game_id, tokens


async def frames(ws: Any, count: int, timeout: float = 5) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(ws.recv(), timeout)) for _ in range(count)]


async def move(served: Served, game_id: str, token: str) -> int:
    """Play one legal action of the token's seat; the version after it."""
    (action, *_) = await served.client.legal_actions(game_id, token)
    return (await served.client.send(game_id, token, action)).version


async def test_websocket_stays_up_while_the_game_is_quiet(served: Served) -> None:
    game_id, tokens = await started(served)
    async with connect(f"{served.ws}/games/{game_id}/live?token={tokens[1]}") as ws:
        assert [f["version"] for f in await frames(ws, 4)] == [1, 2, 3, 4]
        await asyncio.sleep(IDLE_S)  # nothing happens: the read blocks past 5 s
        version = await move(served, game_id, tokens[0])
        got = await frames(ws, version - 4)
        assert [f["version"] for f in got] == list(range(5, version + 1))
        assert ws.close_code is None


async def test_resume_after_a_dropped_socket_has_no_gap_and_no_duplicate(served: Served) -> None:
    game_id, tokens = await started(served)
    url = f"{served.ws}/games/{game_id}/live?token={tokens[0]}"
    async with connect(url) as ws:
        seen = [f["version"] for f in await frames(ws, 4)]
    version = await move(served, game_id, tokens[0])  # while nobody listens
    async with connect(f"{url}&after={seen[-1]}") as ws:
        seen += [f["version"] for f in await frames(ws, version - seen[-1])]
        version = await move(served, game_id, tokens[0])
        seen += [f["version"] for f in await frames(ws, version - seen[-1])]
    assert seen == list(range(1, version + 1))


async def test_a_bad_after_or_include_is_close_4422(served: Served) -> None:
    game_id, _ = await started(served)
    for query in ("after=abc", "after=-1", f"after={2**64}", "include=everything"):
        async with connect(f"{served.ws}/games/{game_id}/live?{query}") as ws:
            error = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert error["error"]["code"] == "malformed_request", query
            await asyncio.wait_for(ws.wait_closed(), 5)
            assert ws.close_code == 4422


async def test_a_websocket_resumed_after_a_marked_version_is_checked(served: Served) -> None:
    """``after`` takes an event stream's id on the WebSocket too: the version and the mark of
    the event the viewer was sent there (SHA-256 of the frame, without ``include=view``). The
    mark of the game's event goes on from it; any other is refused 4409 at once."""
    game_id, tokens = await started(served)
    url = f"{served.ws}/games/{game_id}/live?token={tokens[0]}"
    async with connect(f"{url}&after=3") as ws:
        fourth = await asyncio.wait_for(ws.recv(), 5)
    mark = hashlib.sha256(str(fourth).encode()).hexdigest()[:12]
    async with connect(f"{url}&after=4.{mark}") as ws:
        version = await move(served, game_id, tokens[0])
        assert [frame["version"] for frame in await frames(ws, version - 4)] == list(
            range(5, version + 1)
        )
    async with connect(f"{url}&after=4.{'0' * 12}") as ws:
        error = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert error["error"]["code"] == "history_rewound"
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 4409


async def test_a_finished_channel_closes_1000_at_once(served: Served) -> None:
    game_id = await served.client.create_game(2, seed="live-seed")
    gateway = served.app.state.gateway
    reply = await gateway.send(CommandEnvelope(game_id, "cancel", c.CancelGame(), None))
    assert reply.status == "accepted"
    async with connect(f"{served.ws}/games/{game_id}/live") as ws:  # the whole history, then 1000
        assert [f["type"] for f in await frames(ws, 2)] == ["GameCreated", "GameCancelled"]
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 1000
    started_at = time.monotonic()
    async with connect(f"{served.ws}/games/{game_id}/live?after=2") as ws:
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 1000
    assert time.monotonic() - started_at < 2
    async with httpx.AsyncClient(base_url=served.http) as http:
        response = await http.get(f"/games/{game_id}/events/stream", headers={"Last-Event-ID": "2"})
        assert response.status_code == 204  # tells an EventSource not to reconnect


async def test_a_seat_may_get_its_view_and_legal_actions_with_each_event(served: Served) -> None:
    game_id, tokens = await started(served)
    url = f"{served.ws}/games/{game_id}/live?token={tokens[0]}&include=view&after=3"
    async with connect(url) as ws:
        (frame,) = await frames(ws, 1)
        assert frame["event"]["type"] == "GameStarted"
        assert frame["view"]["version"] == 4
        assert frame["view"]["viewer"] == 0
        assert frame["view"]["seats"][0]["hand"]
        assert frame["view"]["seats"][1]["hand"] is None
        assert all(a["seat"] == 0 for a in frame["legal_actions"])
        listed = await served.client.legal_actions(game_id, tokens[0])
        assert len(frame["legal_actions"]) == len(listed)
        version = await move(served, game_id, tokens[0])
        got = await frames(ws, version - 4)
        assert [f["view"]["version"] for f in got] == list(range(5, version + 1))


async def sse_messages(lines: Any, count: int, timeout: float) -> list[dict[str, str]]:
    """The next ``count`` messages of a stream's ``aiter_lines()`` (comment pings skipped)."""
    out: list[dict[str, str]] = []
    message: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while len(out) < count:
        line = await asyncio.wait_for(lines.__anext__(), max(0.1, deadline - time.monotonic()))
        if not line:
            if message:
                out.append(message)
                message = {}
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        message[key] = value.strip()
    return out


async def test_server_sent_events_resume_with_last_event_id_and_stay_up(served: Served) -> None:
    game_id, tokens = await started(served)
    url = f"/games/{game_id}/events/stream"
    async with httpx.AsyncClient(base_url=served.http, timeout=30) as http:
        headers = {"Authorization": f"Bearer {tokens[1]}"}
        async with http.stream("GET", url, headers=headers, params={"after": 1}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            got = await sse_messages(response.aiter_lines(), 3, 5)
            # Each id is the version and the mark of what was sent (SHA-256 of the data).
            marks = [hashlib.sha256(m["data"].encode()).hexdigest()[:12] for m in got]
            assert [m["id"] for m in got] == [
                f"{v}.{mark}" for v, mark in zip((2, 3, 4), marks, strict=True)
            ]
            assert got[-1]["event"] == "GameStarted"
        version = await move(served, game_id, tokens[0])
        resume = {"Last-Event-ID": got[-1]["id"], "Authorization": f"Bearer {tokens[1]}"}
        async with http.stream("GET", url, headers=resume, params={"after": 0}) as response:
            lines = response.aiter_lines()
            got = await sse_messages(lines, version - 4, 5)
            assert [_version(m) for m in got] == list(range(5, version + 1))
            drawn = [json.loads(m["data"]) for m in got if m["event"] == "DominoDrawn"]
            assert all(d["domino"] is None for d in drawn if d["seat"] == 0)
            await asyncio.sleep(IDLE_S)  # quiet past the 5 s socket timeout
            seat = (await served.client.summary(game_id))["current_seat"]
            later = await move(served, game_id, tokens[seat])
            got = await sse_messages(lines, later - version, 5)
            assert [_version(m) for m in got] == list(range(version + 1, later + 1))
        for after in ("abc", "4.", "4.XYZ", "4.0123456789abc"):
            bad = await http.get(url, params={"after": after})
            assert bad.status_code == 422, after
            assert bad.json()["error"]["code"] == "malformed_request"
        forged = await http.get(url, params={"token": "forged"})
        assert forged.status_code == 403
        # A mark that is not the event's at that version: that event is not the game's now.
        other = {**resume, "Last-Event-ID": "4.000000000000"}
        refused = await http.get(url, headers=other)
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "history_rewound"
        bare = {**resume, "Last-Event-ID": str(later)}  # a bare version: resumed unchecked
        async with http.stream("GET", url, headers=bare) as response:
            assert response.status_code == 200


def _version(message: dict[str, str]) -> int:
    """The version of an event stream's message (its id: ``<version>.<mark>``)."""
    return int(message["id"].partition(".")[0])


async def _redis_clients(redis: aioredis.Redis) -> int:
    return int((await redis.info("clients"))["connected_clients"])


async def test_a_hundred_live_sockets_share_a_bounded_number_of_redis_connections(
    served: Served, redis: aioredis.Redis
) -> None:
    """Sockets on many games of one worker read through its hub: one Redis connection per
    partition with a follower, never one per socket."""
    games = [await started(served) for _ in range(4)]
    before = await _redis_clients(redis)
    sockets = []
    try:
        for index in range(100):
            game_id, tokens = games[index % len(games)]
            ws = await connect(f"{served.ws}/games/{game_id}/live?token={tokens[index % 2]}")
            sockets.append(ws)
        for ws in sockets:  # every socket has its backlog: created, two joins, started...
            assert (await frames(ws, 1))[0]["version"] == 1
        hub = served.app.state.gateway.live
        partitions = {hub.layout.partition_of(game_id) for game_id, _ in games}
        assert hub.connections() <= len(partitions)
        # Beside the feed readers only the gateway's shared pool grows, and it is bounded; it
        # grows with the reads in flight at once, not with the sockets (on a loaded machine
        # the 100 backlogs' reads overlap more).
        bound = len(partitions) + REDIS_CONNECTIONS
        assert await _redis_clients(redis) - before <= min(bound, len(sockets) // 2)
        game_id, tokens = games[0]
        version = await move(served, game_id, tokens[0])
        followers = [ws for i, ws in enumerate(sockets) if i % len(games) == 0]
        for ws in followers:  # the new event reaches every socket of the game, once
            seen = [frame["version"] for frame in await frames(ws, version - 1)]
            assert seen == list(range(2, version + 1))
    finally:
        for ws in sockets:
            await ws.close()


async def test_a_follower_that_falls_behind_reads_what_it_missed_from_the_stream(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queue too short for the events that arrive marks the follower lagging; it reads the
    missed events from the game's stream: the socket sees every version once, in order."""
    from gameserver.gateway import live_hub

    monkeypatch.setattr(live_hub, "QUEUE", 1)
    game_id, tokens = await started(served)
    async with connect(f"{served.ws}/games/{game_id}/live?token={tokens[0]}") as ws:
        assert [frame["version"] for frame in await frames(ws, 4)] == [1, 2, 3, 4]
        version = 4
        for _ in range(6):
            for token in tokens:
                with_move = await served.client.legal_actions(game_id, token)
                if with_move:
                    version = await move(served, game_id, token)
        seen = [frame["version"] for frame in await frames(ws, version - 4)]
        assert seen == list(range(5, version + 1))
    assert served.app.state.gateway.live.catch_ups > 0  # it did fall behind


async def test_a_live_socket_keeps_its_game_when_redis_drops_the_feed_readers_connection(
    served: Served, redis: aioredis.Redis
) -> None:
    """Redis closes every connection (as on a failover or a restart): the worker's feed reader
    reconnects and the socket still gets every later event, once, in order."""
    game_id, tokens = await started(served)
    async with connect(f"{served.ws}/games/{game_id}/live?token={tokens[0]}") as ws:
        assert [frame["version"] for frame in await frames(ws, 4)] == [1, 2, 3, 4]
        await redis.client_kill_filter(_type="normal", skipme=True)
        version = 4
        for _ in range(3):
            for token in tokens:
                if await served.client.legal_actions(game_id, token):
                    version = await move(served, game_id, token)
        seen = [frame["version"] for frame in await frames(ws, version - 4, timeout=10)]
        assert seen == list(range(5, version + 1))
