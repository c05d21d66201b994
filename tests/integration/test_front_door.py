"""The gateway's front door, served by uvicorn as `renature serve gateway` serves it.

Each test is an attack of the network threat model (docs/security.md) against a real server on
loopback, with a real Redis and rules service behind it: headers that name another client (from
a trusted and an untrusted proxy), half-open connections, huge and endless headers, a body that
never comes, uploads to ``POST /disputes``; meanwhile a normal player keeps playing and
``/healthz`` answers. Other clients take other loopback addresses (the whole 127/8 is local on
Linux). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import uvicorn
from fastapi import FastAPI

from devkit.redis_server import free_port
from devkit.waiting import eventually
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.disputes import DisputeDesk
from gameserver.gateway.front_door import FrontDoor, GuardedHttpTools, uvicorn_options
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits
from renature.state import GameState
from support.gateway import gateway_settings
from support.hosting import state_as

pytestmark = pytest.mark.redis

BOUNDS = FrontDoor(
    header_timeout_s=1.0,
    body_timeout_s=1.0,
    max_header_bytes=8 * 1024,
    max_headers=20,
    connections_per_address=8,
)
LIMITS = RateLimits(read="5/minute", seat="1000/minute", create="1000/minute")
PROXY = "127.0.0.2"
STRANGER = "127.0.0.3"
PLAYER = "127.0.0.4"


class Served:
    """A gateway served by uvicorn with the front door's protocol."""

    def __init__(self, app: FastAPI, port: int, protocol: type[GuardedHttpTools]) -> None:
        self.app = app
        self.port = port
        self.protocol = protocol
        self.url = f"http://127.0.0.1:{port}"

    def http(self, address: str) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=address, retries=0)
        return httpx.AsyncClient(base_url=self.url, transport=transport, timeout=10)

    def client(self, address: str) -> GatewayClient:
        transport = httpx.AsyncHTTPTransport(local_address=address, retries=0)
        return GatewayClient(self.url, transport=transport)

    async def raw(self, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port, local_addr=(address, 0))


@contextlib.asynccontextmanager
async def serving(
    redis_url: str, *, trusted: str = "", limits: RateLimits = LIMITS
) -> AsyncIterator[Served]:
    door = dataclasses.replace(BOUNDS, trusted_proxies=trusted)
    settings = gateway_settings(redis_url, allow_chosen_seeds=True, limits=limits, front_door=door)
    app = create_app(settings, command_timeout=5.0)
    protocol = GuardedHttpTools.configured(settings.front_door)
    options = {**uvicorn_options(settings.front_door), "http": protocol}
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-front-door")):
        task = asyncio.create_task(server.serve())
        try:
            await eventually(lambda: server.started, "uvicorn started", timeout=10)
            yield Served(app, port, protocol)
        finally:
            server.should_exit = True
            await asyncio.wait_for(task, 15)
            await app.state.limiter.aclose()


@pytest.fixture
async def served(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Served]:
    async with serving(redis_url, trusted=PROXY) as gateway:
        yield gateway


# -- real client addresses ---------------------------------------------------------------------


async def statuses(client: httpx.AsyncClient, count: int, forwarded: Any) -> list[int]:
    out = []
    for number in range(count):
        headers = forwarded(number)
        out.append((await client.get("/games", headers=headers)).status_code)
    return out


async def test_a_trusted_proxy_names_its_clients_and_anyone_else_cannot(served: Served) -> None:
    async with served.http(PROXY) as proxy, served.http(STRANGER) as stranger:
        # Through the trusted proxy, each client has its own bucket (5 reads a minute) ...
        rotating = await statuses(proxy, 12, lambda n: {"X-Forwarded-For": f"198.51.100.{n}"})
        assert rotating == [200] * 12
        one = await statuses(proxy, 7, lambda n: {"X-Forwarded-For": "203.0.113.9"})
        assert one == [200] * 5 + [429] * 2
        forwarded = await statuses(proxy, 6, lambda n: {"Forwarded": 'for="203.0.113.7:80"'})
        assert forwarded == [200] * 5 + [429]
        # ... and a client cannot name itself through the proxy: the proxy appends the
        # address it saw, and that is the one believed.
        spoofed = await statuses(
            proxy, 6, lambda n: {"X-Forwarded-For": f"192.0.2.{n}, 203.0.113.7"}
        )
        assert spoofed == [429] * 6
        # A client that is not a trusted proxy keeps its own address, whatever it sends.
        direct = await statuses(
            stranger, 7, lambda n: {"X-Forwarded-For": f"192.0.2.{n}", "Forwarded": f"for=x{n}"}
        )
        assert direct == [200] * 5 + [429] * 2


async def test_nothing_is_trusted_by_default_not_even_127_0_0_1(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise: a rotating header
    escaped the limits behind any local proxy."""
    async with serving(redis_url) as gateway, gateway.http("127.0.0.1") as local:
        rotating = await statuses(local, 7, lambda n: {"X-Forwarded-For": f"198.51.100.{n}"})
        assert rotating == [200] * 5 + [429] * 2


# -- slow and huge requests --------------------------------------------------------------------


async def answer_of(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The status and the body of the one answer on a connection the server then closes."""
    data = await asyncio.wait_for(reader.read(), 10)  # to EOF: the server closes it
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


async def play_moves(served: Served, moves: int) -> list[float]:
    """A normal player: a game created, joined and started, then ``moves`` moves, each
    (read the current seat, its legal actions, send one) timed."""
    async with served.client(PLAYER) as client:
        game_id = await client.create_game(2, seed="front-door")
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
        await client.start(game_id, tokens[0])
        took = []
        for number in range(moves):
            start = time.monotonic()
            state = await state_as(client, game_id, tokens[0], GameState)
            legal = await client.legal_actions(game_id, tokens[state.current])
            await client.send(game_id, tokens[state.current], legal[0], command_id=f"m{number}")
            took.append(time.monotonic() - start)
        return took


async def test_half_open_connections_are_capped_and_timed_out_while_a_player_plays(
    served: Served,
) -> None:
    attacker = "127.0.0.9"
    held = [await served.raw(attacker) for _ in range(BOUNDS.connections_per_address)]
    for _, writer in held:  # a head that never ends
        writer.write(b"GET /games HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
        await writer.drain()
    reader, writer = await served.raw(attacker)  # one more from that address: refused at once
    status, body = await answer_of(reader)
    assert (status, b"too_many_connections" in body) == (429, True)
    writer.close()
    # A normal player on another address plays on, and the probe answers.
    took = await play_moves(served, 5)
    assert max(took) < 5
    async with served.http("127.0.0.5") as probe:
        assert (await probe.get("/healthz")).status_code == 200
    # The held connections are answered 408 and closed once the head's time is up.
    for reader, writer in held:
        status, body = await answer_of(reader)
        assert (status, b"request_timeout" in body) == (408, True)
        writer.close()
    assert served.protocol.refusals["request_timeout"] >= BOUNDS.connections_per_address
    await eventually(
        lambda: attacker not in served.protocol.open_per_address, "the address's count freed"
    )
    async with served.http(attacker) as again:  # its count is given back
        assert (await again.get("/healthz")).status_code == 200


async def test_a_huge_header_is_refused_before_it_is_read_whole(served: Served) -> None:
    reader, writer = await served.raw("127.0.0.10")
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Big: ")
    sent = 0
    with contextlib.suppress(ConnectionError):
        while sent < 100 * 1024 * 1024:  # 100 MB, in 64 KiB pieces, until the server closes
            writer.write(b"a" * 65_536)
            await asyncio.wait_for(writer.drain(), 5)
            sent += 65_536
            if reader.at_eof() or writer.is_closing():
                break
            await asyncio.sleep(0)
            if reader._buffer:  # type: ignore[attr-defined]  # the answer came: stop sending
                break
    status, body = await answer_of(reader)
    assert (status, b"headers_too_large" in body) == (431, True)
    assert sent < 16 * 1024 * 1024, f"{sent} bytes were taken"
    writer.close()


async def test_too_many_header_lines_and_a_body_that_never_comes_are_refused(
    served: Served,
) -> None:
    reader, writer = await served.raw("127.0.0.11")
    lines = b"".join(b"X-Line-%d: 1\r\n" % n for n in range(BOUNDS.max_headers + 5))
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n" + lines + b"\r\n")
    status, body = await answer_of(reader)
    assert (status, b"headers_too_large" in body) == (431, True)
    writer.close()
    # A body larger than a head may be, in pieces of its own after the head, is no head.
    reader, writer = await served.raw("127.0.0.11")
    body = b"x" * (4 * BOUNDS.max_header_bytes)
    writer.write(b"POST /disputes HTTP/1.1\r\nHost: gateway\r\n")
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body))
    await writer.drain()
    for start in range(0, len(body), 4096):
        writer.write(body[start : start + 4096])
        await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    assert head.split()[1] == b"200", head  # a file that is no game: its failed audit
    writer.close()
    reader, writer = await served.raw("127.0.0.11")
    writer.write(
        b"POST /games HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"players"'
    )
    status, body = await answer_of(reader)
    assert (status, b"request_timeout" in body) == (408, True)
    writer.close()


# -- security headers and disputes -------------------------------------------------------------


async def test_every_answer_carries_the_security_headers(served: Served) -> None:
    async with served.http(STRANGER) as http:
        answers = [await http.get(path) for path in ("/", "/viewer", "/games", "/nothing")]
        answers += [await http.get("/games") for _ in range(5)]  # the last ones are 429
        assert answers[-1].status_code == 429
    async with served.http("127.0.0.14") as http:
        docs = await http.get("/docs")
    for answer in [*answers, docs]:
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
        assert "'unsafe-inline'" not in policy.split("style-src")[0]  # never for scripts
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    assert "'sha256-" in docs.headers["content-security-policy"]  # its one inline script


async def test_disputes_are_worked_out_off_the_event_loop_and_bounded(
    redis: aioredis.Redis, redis_url: str
) -> None:
    limits = RateLimits(read="1000/minute", seat="1000/minute", create="1000/minute")
    async with serving(redis_url, limits=limits) as served:
        async with served.client(PLAYER) as client:
            result = await play_game(client, 2, "front-door-dispute", ["greedy", "greedy"])
        async with served.http(PLAYER) as http:
            events = (await http.get(f"/games/{result.game_id}/events")).json()
        export = "\n".join(json.dumps(event) for event in events)
        gateway = served.app.state.gateway
        gateway.disputes.close()
        gateway.disputes = DisputeDesk(workers=1, waiting=1)
        async with served.http("127.0.0.12") as first, served.http("127.0.0.13") as second:
            uploads = [
                asyncio.create_task(http.post("/disputes", content=export, timeout=90))
                for http in (first, second, first)
            ]
            # While the files are worked out (the pool's process starts first), the loop
            # answers everyone else.
            async with served.http("127.0.0.5") as probe:
                assert (await probe.get("/healthz")).status_code == 200
                assert not all(upload.done() for upload in uploads)
            answers = await asyncio.wait_for(asyncio.gather(*uploads), 120)
    codes = sorted(answer.status_code for answer in answers)
    assert codes == [200, 200, 503]  # one worker, one waiting: the third is turned away
    busy = next(answer for answer in answers if answer.status_code == 503)
    assert busy.json()["error"]["code"] == "inspections_busy"
    assert int(busy.headers["Retry-After"]) >= 1
    done = next(answer for answer in answers if answer.status_code == 200).json()
    assert done["event_count"] == len(events)
    assert done["audit"]["events"] == len(events)
