"""The front door really run: the shipped infra/nginx/nginx.conf in front of a real gateway.

Debian's nginx (the Makefile's ``proxy`` target installs it; missing, the test skips loudly and
fails in CI) runs the shipped file itself, rendered into a private directory by `render`,
which changes only what a test machine must: the port it listens on (on loopback), the
gateway it forwards to (the test's, on a free port) and the ``/tmp`` paths of the unprivileged
image (pid file, temporary bodies) moved into that directory. Every other line, the timeouts,
sizes and per-address limits included, is the file as shipped. The gateway is served by uvicorn
with its own front door (`gameserver.gateway.front_door`), its defaults, as `renature serve
gateway` serves it, and trusts nginx's address alone (127.0.0.1).

While a normal player plays through nginx, three attacks from other loopback addresses run at
once: 200 half-open connections from one address, heads of 100 KB, and a body that stalls.
nginx turns each away (the heads at once, the half-open connections at its 10 s header
timeout, the stalled body at its 30 s body timeout) and the player's requests all succeed.
Then a limit keyed by address (the gateway's ``read`` limit) is shown to count the client nginx
saw, not nginx: one client exhausting it leaves another with its own, and a forged
``X-Forwarded-For`` changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from devkit.redis_server import free_port
from devkit.requirements import nginx_path
from devkit.waiting import eventually
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.client_address import TrustedNetworks
from gameserver.gateway.front_door import FrontDoor, GuardedHttpTools
from gameserver.gateway.ratelimit import RateLimits
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature.state import GameState
from support.gateway import serving
from support.hosting import state_as

pytestmark = pytest.mark.redis

SHIPPED = Path(__file__).resolve().parents[2] / "infra" / "nginx" / "nginx.conf"
NGINX_ADDRESS = "127.0.0.1"  # where nginx listens, and the address the gateway sees it from
PLAYER = "127.0.0.4"
HALF_OPEN = "127.0.0.9"
HUGE = "127.0.0.10"
SLOW = "127.0.0.11"
READER, OTHER_READER = "127.0.0.21", "127.0.0.22"
READS_PER_MINUTE = 5
LIMITS = RateLimits(read=f"{READS_PER_MINUTE}/minute", seat="1000/minute", create="1000/minute")
HEADER_TIMEOUT_S = 10.0  # client_header_timeout of the shipped file
BODY_TIMEOUT_S = 30.0  # client_body_timeout


def render(directory: Path, port: int, gateway_port: int) -> Path:
    """The shipped file with its port, its upstream and its /tmp paths replaced (and nothing
    else: each replacement must match exactly once, so a change to the shipped file that this
    misses fails here rather than testing something else)."""
    text = SHIPPED.read_text()
    for old, new in (
        (r"\n\s*listen 8080;", f"\n        listen {NGINX_ADDRESS}:{port};"),
        (r"server renature-gateway:8000;", f"server 127.0.0.1:{gateway_port};"),
    ):
        text, count = re.subn(old, new, text)
        assert count == 1, f"{old!r} is not in {SHIPPED} once"
    text = text.replace(" /tmp/", f" {directory}/")
    assert "/tmp/" not in text.replace(str(directory), "")
    out = directory / "nginx.conf"
    out.write_text(text)
    return out


@dataclass
class Nginx:
    port: int
    directory: Path
    gateway: type[GuardedHttpTools] | None = None
    """The gateway's protocol behind it (its counts of what it refused)."""

    @property
    def url(self) -> str:
        return f"http://{NGINX_ADDRESS}:{self.port}"

    def http(self, address: str) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=address, retries=0)
        return httpx.AsyncClient(base_url=self.url, transport=transport, timeout=20)

    async def raw(self, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(NGINX_ADDRESS, self.port, local_addr=(address, 0))

    def access_log(self) -> str:
        return (self.directory / "stdout.log").read_text(errors="replace")


@contextlib.contextmanager
def nginx(gateway_port: int) -> Iterator[Nginx]:
    """nginx with the rendered file, in the foreground, stopped (by its pid) at the end."""
    executable = nginx_path()
    # Its own directory, not pytest's (mode 0700): nginx started as root runs its workers as
    # nobody, who must reach the temporary bodies' directory.
    directory = Path(tempfile.mkdtemp(prefix="renature-nginx-"))
    directory.chmod(0o755)
    port = free_port()
    conf = render(directory, port, gateway_port)
    check = subprocess.run(
        [executable, "-t", "-p", str(directory), "-e", "stderr", "-c", str(conf)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, check.stderr
    with (directory / "stdout.log").open("wb") as out, (directory / "stderr.log").open("wb") as err:
        process = subprocess.Popen(
            [executable, "-p", str(directory), "-e", "stderr", "-c", str(conf), "-g",
             "daemon off;"],
            stdout=out,
            stderr=err,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, (directory / "stderr.log").read_text()
            with contextlib.suppress(OSError), socket.create_connection((NGINX_ADDRESS, port), 1):
                break
            assert time.monotonic() < deadline, "nginx did not start listening"
            time.sleep(0.05)
        yield Nginx(port, directory)
    finally:
        process.terminate()  # SIGTERM: nginx's fast shutdown, the workers with it
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.asynccontextmanager
async def front_door(redis_url: str) -> AsyncIterator[Nginx]:
    """A rules service, the gateway (its front door's defaults, trusting nginx's address) on a
    free port, and nginx in front of it."""
    app = create_app(
        redis_url,
        command_timeout=10.0,
        allow_chosen_seeds=True,
        rate_limits=LIMITS,
        trusted_proxies=NGINX_ADDRESS,
    )
    bounds = FrontDoor()
    protocol = GuardedHttpTools.configured(bounds, TrustedNetworks.parse(NGINX_ADDRESS))
    options = {**bounds.uvicorn_options(), "http": protocol, "lifespan": "on"}
    async with (
        RulesService(Settings(redis_url=redis_url, consumer="rules-nginx")),
        serving(app, **options) as gateway,
    ):
        try:
            with nginx(int(gateway.rpartition(":")[2])) as proxy:
                proxy.gateway = protocol
                yield proxy
        finally:
            await app.state.limiter.aclose()


# -- the attacks -------------------------------------------------------------------------------


async def ended_after(reader: asyncio.StreamReader, limit: float) -> tuple[float, bytes]:
    """How long until the server ended the connection, and what it sent before."""
    start = time.monotonic()
    data = b""
    with contextlib.suppress(ConnectionError):
        data = await asyncio.wait_for(reader.read(), limit)  # to EOF
    return time.monotonic() - start, data


async def hold_half_open(proxy: Nginx, count: int) -> list[tuple[float, bytes]]:
    """``count`` connections from one address, each a head that never ends."""
    held = [await proxy.raw(HALF_OPEN) for _ in range(count)]
    for _, writer in held:
        writer.write(b"GET /games HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
    await asyncio.gather(*(writer.drain() for _, writer in held))
    ends = await asyncio.gather(*(ended_after(reader, 60) for reader, _ in held))
    for _, writer in held:
        writer.close()
    return list(ends)


async def huge_heads(proxy: Nginx, times: int) -> list[int]:
    """Requests with a 100 KB header (one line, then many lines): nginx's statuses."""
    statuses = []
    async with proxy.http(HUGE) as client:
        for number in range(times):
            big = {"X-Big": "a" * 100_000}
            many = {f"X-Part-{n}": "b" * 10_000 for n in range(10)}
            response = await client.get("/healthz", headers=big if number % 2 else many)
            assert "headers_too_large" not in response.text  # nginx's refusal, not the gateway's
            statuses.append(response.status_code)
    return statuses


async def stalled_body(proxy: Nginx) -> tuple[float, bytes]:
    """A body that stops coming after its first kilobyte."""
    reader, writer = await proxy.raw(SLOW)
    writer.write(
        b"POST /disputes HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/octet-stream\r\n"
        b"Content-Length: 100000\r\n\r\n" + b"x" * 1000
    )
    await writer.drain()
    ended = await ended_after(reader, BODY_TIMEOUT_S + 30)
    writer.close()
    return ended


class Recording(httpx.AsyncHTTPTransport):
    """A transport that keeps the status of every answer (the client retries a 429 quietly:
    this sees it)."""

    def __init__(self, address: str) -> None:
        super().__init__(local_address=address, retries=0)
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        self.statuses.append(response.status_code)
        return response


async def play_until(proxy: Nginx, done: asyncio.Event, transport: Recording) -> int:
    """A normal player through nginx: a game created, joined and started, then moves (read the
    state, the legal actions, send one) until ``done``. Returns the number of moves made."""
    async with GatewayClient(proxy.url, transport=transport) as client:
        moves = 0
        while not done.is_set():
            game_id = await client.create_game(2, seed=f"through-nginx-{moves}")
            tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
            await client.start(game_id, tokens[0])
            while not done.is_set():
                state = await state_as(client, game_id, tokens[0], GameState)
                seat = 0 if state.current is None else state.current
                legal = await client.legal_actions(game_id, tokens[seat])
                if not legal:  # the game is over: another one
                    break
                await client.send(game_id, tokens[seat], legal[0], command_id=f"m{moves}")
                moves += 1
                await asyncio.sleep(0.1)  # a person's pace, well within nginx's 50 requests/s
        return moves


async def test_the_shipped_nginx_holds_the_attacks_while_a_player_plays(
    redis: aioredis.Redis, redis_url: str
) -> None:
    async with front_door(redis_url) as proxy:
        done = asyncio.Event()
        seen = Recording(PLAYER)
        player = asyncio.create_task(play_until(proxy, done, seen))
        half_open = asyncio.create_task(hold_half_open(proxy, 200))
        stalled = asyncio.create_task(stalled_body(proxy))
        heads = await huge_heads(proxy, 6)
        ends = await half_open
        body_end = await stalled
        done.set()
        moves = await player
        log = proxy.access_log()

    assert len(heads) == 6
    assert set(heads) <= {400, 431}, heads  # nginx's 400 "Request Header Or Cookie Too Large"
    # The half-open heads were held until nginx's header timeout, then closed without an
    # answer (nginx logs 408 and sends nothing); none reached the gateway.
    assert len(ends) == 200
    for took, data in ends:
        assert HEADER_TIMEOUT_S - 1 <= took <= HEADER_TIMEOUT_S + 20, took
        assert data == b""
    assert log.count(f"{HALF_OPEN} [") == log.count('"GET /games" 408') == 200
    # The stalled body was cut at nginx's body timeout (the same), never handed to the gateway.
    took, data = body_end
    assert BODY_TIMEOUT_S - 1 <= took <= BODY_TIMEOUT_S + 25, took
    assert data == b""
    assert moves >= 10, moves  # the player played all along ...
    assert [status for status in seen.statuses if status >= 300] == []  # ... never refused
    assert proxy.gateway is not None
    assert dict(proxy.gateway.refusals) == {}  # nothing slow or huge reached the gateway
    assert f"{SLOW} [" in log
    assert 'POST /disputes" 408' in log, log[-2000:]


async def test_nginx_passes_the_client_address_that_the_gateways_limits_count(
    redis: aioredis.Redis, redis_url: str
) -> None:
    async with front_door(redis_url) as proxy:
        async with proxy.http(READER) as reader, proxy.http(OTHER_READER) as other:
            first = [(await reader.get("/games")).status_code for _ in range(READS_PER_MINUTE)]
            assert first == [200] * READS_PER_MINUTE
            # Its bucket is spent; a header naming another client is overwritten by nginx.
            forged = await reader.get("/games", headers={"X-Forwarded-For": "198.51.100.7"})
            assert forged.status_code == 429, forged.text
            real_ip = await reader.get("/games", headers={"X-Real-IP": "198.51.100.8"})
            assert real_ip.status_code == 429
            forwarded = await reader.get("/games", headers={"Forwarded": "for=198.51.100.9"})
            assert forwarded.status_code == 429
            # Another client behind the same nginx has a bucket of its own: the gateway
            # counts the address nginx saw, not nginx's.
            assert (await other.get("/games")).status_code == 200
            secret = await other.get("/games", params={"token": "never-logged-secret"})
            assert secret.status_code == 200
        await eventually(lambda: "GET /games" in proxy.access_log(), "the access log written")
        log = proxy.access_log()
        assert READER in log
        assert OTHER_READER in log
        assert "never-logged-secret" not in log  # the shipped log format has no query string
        assert os.path.exists(proxy.directory / "nginx.pid")
