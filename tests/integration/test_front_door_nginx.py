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
``X-Forwarded-For`` changes nothing. nginx's connection cap per address (``limit_conn``, 64)
refuses an abuser's 65th open live stream (429) while a player from another address plays on;
and a seat's live WebSocket crosses nginx (the upgrade passed on), stays open while idle past
every timeout but ``proxy_read_timeout`` (the gateway's 20 s pings cross it, and the pongs
back) and answers a move sent over it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
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
from gameserver.gateway.front_door import GuardedHttpTools, uvicorn_options
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits
from renature.state import GameState
from support.gateway import gateway_settings, serving, started_game
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
async def front_door(redis_url: str, limits: RateLimits = LIMITS) -> AsyncIterator[Nginx]:
    """A rules service, the gateway (its front door's defaults, trusting nginx's address) on a
    free port, and nginx in front of it."""
    settings = gateway_settings(
        redis_url, allow_chosen_seeds=True, limits=limits, trusted_proxies=NGINX_ADDRESS
    )
    app = create_app(settings, command_timeout=10.0)
    protocol = GuardedHttpTools.configured(settings.front_door)
    options = {**uvicorn_options(settings.front_door), "http": protocol, "lifespan": "on"}
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-nginx")),
        serving(app, **options) as gateway,
    ):
        try:
            with nginx(int(gateway.rpartition(":")[2])) as proxy:
                proxy.gateway = protocol
                yield proxy
        finally:
            await app.state.limiter.aclose()


# -- the attacks -------------------------------------------------------------------------------


async def ended_after(
    reader: asyncio.StreamReader, limit: float, since: float | None = None
) -> tuple[float, bytes]:
    """How long until the server ended the connection (counted from ``since``, by default from
    now), and what it sent before."""
    start = time.monotonic() if since is None else since
    data = b""
    with contextlib.suppress(ConnectionError):
        data = await asyncio.wait_for(reader.read(), limit)  # to EOF
    return time.monotonic() - start, data


async def hold_half_open(proxy: Nginx, count: int) -> list[tuple[float, bytes]]:
    """``count`` connections from one address, each a head that never ends."""
    # nginx's header timer starts when it accepts each connection: after the connect began,
    # but perhaps long before this loop resumes once the connect is done (on a loaded machine
    # that was 1.4 s once, and opening 200 took seconds), so each is timed from its start.
    held, opened = [], []
    for _ in range(count):
        opened.append(time.monotonic())
        held.append(await proxy.raw(HALF_OPEN))
    for _, writer in held:
        writer.write(b"GET /games HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
    await asyncio.gather(*(writer.drain() for _, writer in held))
    waits = (ended_after(reader, 60, at) for (reader, _), at in zip(held, opened, strict=True))
    ends = await asyncio.gather(*waits)
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
    sent = time.monotonic()  # nginx's body timer starts at its read, after this, not after drain
    writer.write(
        b"POST /disputes HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/octet-stream\r\n"
        b"Content-Length: 100000\r\n\r\n" + b"x" * 1000
    )
    await writer.drain()
    ended = await ended_after(reader, BODY_TIMEOUT_S + 30, sent)
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


# -- connections per address, and the live channel through nginx ---------------------------------

ABUSER, NEIGHBOUR = "127.0.0.2", "127.0.0.3"
CONNECTIONS_PER_ADDRESS = 64  # limit_conn per_address of the shipped file
OPEN_LIVE = RateLimits(
    read="1000/minute",
    seat="1000/minute",
    create="1000/minute",
    live="1000/minute",
    live_per_address=1000,
    live_per_game=1000,
)
"""The gateway's own live limits opened wide: what refuses the abuser here is nginx's cap."""
IDLE_S = 36.0
"""Longer than every timeout of the shipped file but proxy_read_timeout (keep-alive 15 s, body
and send 30 s) and than the gateway's WebSocket ping interval (uvicorn's 20 s)."""


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def open_stream(proxy: Nginx, address: str, game_id: str) -> tuple[int, asyncio.StreamWriter]:
    """A spectator's event stream opened from ``address``: nginx's status, and the connection
    (held open)."""
    reader, writer = await proxy.raw(address)
    writer.write(
        f"GET /games/{game_id}/events/stream HTTP/1.1\r\nHost: gateway\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    return int(head[9:12]), writer


async def test_nginx_caps_one_address_s_connections_while_another_address_plays(
    redis: aioredis.Redis, redis_url: str
) -> None:
    async with front_door(redis_url, OPEN_LIVE) as proxy:
        seen = Recording(NEIGHBOUR)
        async with httpx.AsyncClient(base_url=proxy.url, transport=seen, timeout=20) as player:
            game_id, tokens = await started_game(player)
            opened = [await open_stream(proxy, ABUSER, game_id) for _ in range(70)]
            statuses = [status for status, _ in opened]
            # The abuser's 64 streams are held; every connection past them is refused by
            # nginx (429) and never reaches the gateway.
            assert statuses == [200] * CONNECTIONS_PER_ADDRESS + [429] * 6, statuses
            for _ in range(6):  # the neighbour plays on while the abuser's 64 stay open
                view = await player.get(f"/games/{game_id}/view", headers=bearer(tokens[0]))
                token = tokens[view.json()["current_seat"]]
                legal = await player.get(f"/games/{game_id}/legal-actions", headers=bearer(token))
                move = {"command_id": f"n{len(seen.statuses)}", "command": legal.json()[0]}
                sent = await player.post(
                    f"/games/{game_id}/commands", json=move, headers=bearer(token)
                )
                assert sent.status_code == 200, sent.text
            late, writer = await open_stream(proxy, ABUSER, game_id)
            assert late == 429  # still capped
            writer.close()
            for _, writer in opened:
                writer.close()
        assert [status for status in seen.statuses if status >= 300] == []
        log = proxy.access_log()
    assert log.count(f"{ABUSER} [") >= 7
    assert f"{NEIGHBOUR} [" in log


class RawSocket:
    """A WebSocket client that shows what a library hides: the server's pings (answered)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.pings = 0
        self.opened = time.monotonic()

    @classmethod
    async def open(cls, proxy: Nginx, address: str, path: str) -> tuple[RawSocket, bytes]:
        reader, writer = await proxy.raw(address)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade"
            f"\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        return cls(reader, writer), await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)

    def send(self, opcode: int, payload: bytes) -> None:
        """A client frame (masked, as the protocol wants; payloads under 126 bytes here or
        under 64 KiB)."""
        mask = os.urandom(4)
        size = len(payload)
        length = (
            bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2, "big")
        )
        masked = bytes(byte ^ mask[n % 4] for n, byte in enumerate(payload))
        self.writer.write(bytes([0x80 | opcode]) + length + mask + masked)

    async def text(self, seconds: float) -> str | None:
        """The next text frame within ``seconds`` (pings answered on the way), or None."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                first, second = await asyncio.wait_for(self.reader.readexactly(2), left)
            except TimeoutError:
                return None
            except asyncio.IncompleteReadError as error:
                took = time.monotonic() - self.opened
                raise AssertionError(f"the connection ended after {took:.1f} s") from error
            length = second & 0x7F
            if length >= 126:
                extended = await self.reader.readexactly(2 if length == 126 else 8)
                length = int.from_bytes(extended, "big")
            payload = await self.reader.readexactly(length)
            opcode = first & 0x0F
            if opcode == 9:  # a ping: pong with its payload
                self.pings += 1
                self.send(0xA, payload)
            elif opcode == 8:
                took = time.monotonic() - self.opened
                raise AssertionError(f"closed after {took:.1f} s: {payload!r}")
            elif opcode == 1:
                return payload.decode()
        return None


async def test_a_live_websocket_through_nginx_idles_past_its_timeouts_and_takes_a_move(
    redis: aioredis.Redis, redis_url: str
) -> None:
    async with front_door(redis_url) as proxy:
        async with proxy.http(PLAYER) as http:
            game_id, tokens = await started_game(http)
            view = await http.get(f"/games/{game_id}/view", headers=bearer(tokens[0]))
            token = tokens[view.json()["current_seat"]]
            legal = await http.get(f"/games/{game_id}/legal-actions", headers=bearer(token))
        socket, head = await RawSocket.open(proxy, PLAYER, f"/games/{game_id}/live?token={token}")
        try:
            assert head.startswith(b"HTTP/1.1 101"), head  # nginx passed the upgrade on
            assert b"upgrade: websocket" in head.lower()
            pushed = []
            deadline = time.monotonic() + IDLE_S
            while (left := deadline - time.monotonic()) > 0:  # the backlog, then nothing: idle
                frame = await socket.text(left)
                if frame is not None:
                    pushed.append(frame)
            assert pushed, "the game's events were pushed"
            assert socket.pings >= 1  # the gateway's pings crossed nginx, and our pongs back
            move = {"command_id": "over-nginx", "command": legal.json()[0]}
            socket.send(0x1, json.dumps(move).encode())
            while True:
                frame = await socket.text(20)
                assert frame is not None, "no answer to the move"
                if frame.startswith('{"answer"'):
                    break
            answer = json.loads(frame)["answer"]
            assert answer["command_id"] == "over-nginx"
            assert answer["status"] == "accepted", answer
        finally:
            socket.writer.close()
