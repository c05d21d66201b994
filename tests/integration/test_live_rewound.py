"""A live channel whose events a crash took back is told so, never fed another history.

Under ``appendfsync everysec`` a crash may cost Redis its last second of writes, and the
services go on from what it kept: the versions after it are given to other events. A socket
that had been sent the lost events must not be handed the new ones as their continuation.
Here Redis really comes back without its last writes: a snapshot is saved, moves are played
and pushed, and the server is killed and started again from the snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from devkit.redis_server import RedisServer
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings, serving

pytestmark = pytest.mark.redis


@dataclass
class Stack:
    server: RedisServer
    http: str
    ws: str
    client: GatewayClient

    def snapshot(self) -> None:
        """What the disk holds from now on (the server saves nothing by itself)."""
        with redis.Redis.from_url(self.server.url) as sync:
            sync.save()

    def crash(self) -> None:
        """Killed and started again: Redis comes back with the last snapshot only."""
        self.server.stop(kill=True)
        self.server.start()


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    with RedisServer(data_dir=tmp_path) as server:
        settings = gateway_settings(server.url, allow_chosen_seeds=True)
        app = create_app(settings, command_timeout=5.0)
        async with (
            serving(app, lifespan="auto", ws_ping_interval=2) as address,
            RulesService(Settings.of(redis_url=server.url, consumer="rules-rewound")),
            GatewayClient(f"http://{address}") as client,
        ):
            yield Stack(server, f"http://{address}", f"ws://{address}", client)


async def started(stack: Stack) -> tuple[str, list[str]]:
    game_id = await stack.client.create_game(2, seed="rewound-seed")
    tokens = [await stack.client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    await stack.client.start(game_id, tokens[0])
    return game_id, tokens


async def play(stack: Stack, game_id: str, tokens: list[str], moves: int, pick: int = 0) -> int:
    """``moves`` legal moves, each of the seat whose turn it is (the ``pick``-th of its legal
    actions); the version after them."""
    version = 0
    for _ in range(moves):
        seat = (await stack.client.summary(game_id))["current_seat"]
        action = (await stack.client.legal_actions(game_id, tokens[seat]))[pick]
        version = (await stack.client.send(game_id, tokens[seat], action)).version
    return version


async def frames_until_closed(ws: Any, timeout: float = 10) -> list[dict[str, Any]]:
    """The frames a socket gets until it is closed (with any code)."""
    out = []
    async with asyncio.timeout(timeout):
        with contextlib.suppress(ConnectionClosed):
            async for message in ws:
                out.append(json.loads(message))
    return out


async def test_a_socket_sent_events_a_crash_took_back_is_closed_4409(stack: Stack) -> None:
    game_id, tokens = await started(stack)
    url = f"{stack.ws}/games/{game_id}/live?token={tokens[1]}"
    async with connect(url) as ws:
        first = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(4)]
        assert [frame["version"] for frame in first] == [1, 2, 3, 4]
        stack.snapshot()
        seen = await play(stack, game_id, tokens, 3)
        pushed = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(seen - 4)]
        assert [frame["version"] for frame in pushed] == list(range(5, seen + 1))
        stack.crash()
        after = await frames_until_closed(ws)
    assert [frame["error"]["code"] for frame in after] == ["history_rewound"]
    assert ws.close_code == 4409
    # The stream kept 4 events; whoever saw more is told so at once on its way back in...
    async with connect(f"{url}&after={seen}") as again:
        refused = await frames_until_closed(again)
    assert refused[0]["error"]["code"] == "history_rewound"
    assert again.close_code == 4409
    # ... and follows the history that stands from what it kept.
    async with connect(f"{url}&after=4") as resumed:
        version = await play(stack, game_id, tokens, 2)
        later = [json.loads(await asyncio.wait_for(resumed.recv(), 5)) for _ in range(version - 4)]
    assert [frame["version"] for frame in later] == list(range(5, version + 1))


async def test_server_sent_events_end_with_history_rewound(stack: Stack) -> None:
    game_id, tokens = await started(stack)
    url = f"{stack.http}/games/{game_id}/events/stream"
    headers = {"Authorization": f"Bearer {tokens[0]}"}
    async with httpx.AsyncClient(timeout=30) as http:
        messages, seen = await streamed_through_a_crash(stack, http, game_id, headers, tokens)
        ids = [int(m["id"].partition(".")[0]) for m in messages if "id" in m]
        assert ids == list(range(1, seen + 1))  # everything sent before the crash, once
        assert messages[-1]["event"] == "history_rewound"
        assert json.loads(messages[-1]["data"])["error"]["code"] == "history_rewound"
        resumed = await http.get(url, headers={**headers, "Last-Event-ID": str(seen)})
        assert resumed.status_code == 409
        assert resumed.json()["error"]["code"] == "history_rewound"


async def test_an_event_stream_resumed_on_another_history_is_refused(stack: Stack) -> None:
    """A browser's EventSource comes back by itself with the id of the last message it got.
    Here the crash took that event back and the game went on past its version with other
    moves: the resume is refused (409 ``history_rewound``), never continued on the history
    that stands now. Resumed from an event the stream still holds, it follows that history."""
    game_id, tokens = await started(stack)
    url = f"{stack.http}/games/{game_id}/events/stream"
    headers = {"Authorization": f"Bearer {tokens[0]}"}
    async with httpx.AsyncClient(timeout=30) as http:
        messages, seen = await streamed_through_a_crash(stack, http, game_id, headers, tokens)
        ids = [m["id"] for m in messages if "id" in m]
        assert [int(i.partition(".")[0]) for i in ids] == list(range(1, seen + 1))
        kept = ids[3]  # version 4: the snapshot holds it
        now = await play(stack, game_id, tokens, 4, pick=-1)  # other moves, past `seen`
        assert now > seen
        async with http.stream("GET", url, headers={**headers, "Last-Event-ID": ids[-1]}) as no:
            assert no.status_code == 409  # not a stream of the history that stands now
            assert json.loads(await no.aread())["error"]["code"] == "history_rewound"
        async with http.stream("GET", url, headers={**headers, "Last-Event-ID": kept}) as again:
            assert again.status_code == 200
            lines = again.aiter_lines()
            later = await sse_messages(lines, timeout=3, until=now - 4)
        assert [int(m["id"].partition(".")[0]) for m in later] == list(range(5, now + 1))


async def streamed_through_a_crash(
    stack: Stack, http: httpx.AsyncClient, game_id: str, headers: dict[str, str], tokens: list[str]
) -> tuple[list[dict[str, str]], int]:
    """A game's event stream followed while a snapshot is saved, two moves are played and
    Redis crashes: every message it got (the stream ends), and the version it was shown."""
    url = f"{stack.http}/games/{game_id}/events/stream"
    async with http.stream("GET", url, headers=headers) as response:
        lines = response.aiter_lines()
        stack.snapshot()
        seen = await play(stack, game_id, tokens, 2)
        stack.crash()
        return await sse_messages(lines), seen


async def sse_messages(
    lines: Any, timeout: float = 10, until: int | None = None
) -> list[dict[str, str]]:
    """Every message of a stream until it ends, or the first ``until`` of them (comment pings
    skipped)."""
    out: list[dict[str, str]] = []
    message: dict[str, str] = {}
    async with asyncio.timeout(timeout):
        async for line in lines:
            if not line:
                if message:
                    out.append(message)
                    message = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(":")
                message[key] = value.strip()
            if until is not None and len(out) == until:
                break
    return out
