"""The floods of the flood bench, each in a process of its own (``python -m bench.flood_attacks
URL GAME SECONDS PATTERN`` prints what it got as one JSON line).

An attacker does not wait out a ``Retry-After``: every flood here keeps sending at its offered
rate whatever it is answered, on a raw keep-alive HTTP/1.1 client (a few microseconds of the
attacker's CPU per request, where an ``httpx`` request costs a millisecond: the attack, not the
attacker's own client, is what the gateway meets). A request that finds its connection closed
(the gateway closes after a 413, a 408 or a refused connection) opens another one.

- ``proxy``: made-up tokens on a game's ``/view`` from the shared address the players use too;
- ``bearers``: random bearers on the routes that ignore tokens (audit, explanation, spectator
  view, summary), from eight addresses;
- ``disputes``: 1 MB uploads to ``POST /disputes`` from eight addresses;
- ``half-open``: connections that send half a head and wait, re-opened as they are closed;
- ``spectators``: live WebSockets to a finished game (each sends the whole game, then closes),
  300 at a time from 200 addresses, opened at 1,000 a second in all (each opened again at its
  next turn however it was answered); the frames are counted, never decoded.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable

SHARED = "127.0.0.2"
"""The players' shared address (an ingress the gateway does not trust)."""
FLOOD_ADDRESSES = [f"127.0.3.{n}" for n in range(1, 9)]
HTTP_RATE = 1_000
"""Requests per second offered by the HTTP floods (far past every limit of their addresses)."""
DISPUTE_RATE = 20
"""Uploads per second offered (1 MB each: 20 MB/s)."""
CONNECTIONS = 32
HALF_OPEN = 400
SPECTATORS = 300


class Raw:
    """One keep-alive HTTP/1.1 connection from ``local`` (one request at a time)."""

    def __init__(self, host: str, port: int, local: str) -> None:
        self.host, self.port, self.local = host, port, local
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, head: bytes, body: bytes = b"") -> str:
        """The answer's status ("429"), or what went wrong ("closed", "refused")."""
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(
                    self.host, self.port, local_addr=(self.local, 0)
                )
            assert self.reader is not None
            self.writer.write(head + body)
            raw = await self.reader.readuntil(b"\r\n\r\n")
            length, close = 0, False
            for line in raw.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and b"close" in value.lower():
                    close = True
            await self.reader.readexactly(length)
            if close:
                self.close()
            return raw[9:12].decode()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            self.close()
            return "closed"

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def head(method: str, path: str, token: str | None = None, length: int | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: gateway"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if length is not None:
        lines += ["Content-Type: application/x-ndjson", f"Content-Length: {length}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def paced(
    rate: float, workers: int, until: float, step: Callable[[int, int], Awaitable[None]]
) -> None:
    """``workers`` coroutines calling ``step(worker, n)`` so that together they offer ``rate``
    calls a second until ``until`` (a worker that falls behind does not sleep)."""

    async def work(worker: int) -> None:
        start, n = time.monotonic(), 0
        while time.monotonic() < until:
            n += 1
            await step(worker, n)
            pause = start + n * workers / rate - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)

    await asyncio.gather(*(work(w) for w in range(workers)), return_exceptions=True)


async def http_flood(
    host: str, port: int, game: str, until: float, pattern: str, statuses: Counter[str]
) -> None:
    addresses = [SHARED] if pattern == "proxy" else FLOOD_ADDRESSES
    connections = [Raw(host, port, addresses[n % len(addresses)]) for n in range(CONNECTIONS)]
    free = [f"/games/{game}/{p}" for p in ("audit", "explanation", "spectator", "")]
    upload = dispute_file(game) if pattern == "disputes" else b""

    async def step(worker: int, n: int) -> None:
        token = uuid.uuid4().hex
        if pattern == "disputes":
            request = head("POST", "/disputes", length=len(upload))
            statuses[await connections[worker].request(request, upload)] += 1
            return
        path = f"/games/{game}/view" if pattern == "proxy" else free[n % 4].rstrip("/")
        statuses[await connections[worker].request(head("GET", path, token))] += 1

    rate = DISPUTE_RATE if pattern == "disputes" else HTTP_RATE
    await paced(rate, CONNECTIONS, until, step)
    for connection in connections:
        connection.close()


def dispute_file(game: str) -> bytes:
    """The finished game's events, padded, cut at 1 MB (``FLOOD_EVENTS`` holds them)."""
    events = json.loads(os.environ["FLOOD_EVENTS"])
    lines = [json.dumps({**event, "pad": "p" * 3_000}) for event in events]
    return "\n".join(lines).encode()[: 1024 * 1024]


async def half_open(host: str, port: int, until: float, statuses: Counter[str]) -> None:
    """Connections that send a head and never end it, re-opened as the gateway closes them."""

    async def hold(number: int) -> None:
        address = FLOOD_ADDRESSES[number % 4]  # 100 per address: past the gateway's 64
        while time.monotonic() < until:
            try:
                reader, writer = await asyncio.open_connection(host, port, local_addr=(address, 0))
            except OSError:
                statuses["refused"] += 1
                await asyncio.sleep(0.2)
                continue
            writer.write(b"GET /games HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
            try:
                answer = await asyncio.wait_for(reader.read(64), max(0.1, until - time.monotonic()))
                statuses[answer[9:12].decode() or "closed"] += 1
            except TimeoutError:
                statuses["held"] += 1
            except OSError:
                statuses["reset"] += 1
            writer.close()

    await asyncio.gather(*(hold(n) for n in range(HALF_OPEN)), return_exceptions=True)


async def spectators(host: str, port: int, game: str, until: float, statuses: Counter[str]) -> None:
    """Live WebSockets to one game from 200 addresses, ``SPECTATORS`` at a time, opened at
    `HTTP_RATE` a second in all (a socket refused or closed is opened again at the next
    turn, whatever ``Retry-After`` it was told)."""
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = (
        f"GET /games/{game}/live HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()

    async def watch(number: int, _: int) -> None:
        address = f"127.0.4.{1 + number % 200}"
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=(address, 0)), 5
            )
        except (OSError, TimeoutError):
            statuses["refused"] += 1
            return
        try:
            writer.write(upgrade)
            opened = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            if opened[9:12] != b"101":  # the handshake refused (429 from memory)
                statuses[opened[9:12].decode()] += 1
                return
            left = max(0.1, until - time.monotonic())
            frames, code = await asyncio.wait_for(read_frames(reader), left)
            statuses["4429" if code == 4429 else opened[9:12].decode()] += 1
            statuses["frames"] += frames
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            statuses["failed"] += 1
        finally:
            writer.close()

    await paced(HTTP_RATE, SPECTATORS, until, watch)


async def read_frames(reader: asyncio.StreamReader) -> tuple[int, int]:
    """Read a WebSocket's frames (the server's are never masked) up to its close frame: how
    many, and the close code."""
    frames = 0
    while True:
        first, second = await reader.readexactly(2)
        length = second & 0x7F
        if length >= 126:
            length = int.from_bytes(await reader.readexactly(2 if length == 126 else 8), "big")
        payload = await reader.readexactly(length)
        if first & 0x0F == 8:
            return frames, int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 0
        frames += 1


async def flood(url: str, game: str, seconds: float, pattern: str) -> dict[str, object]:
    host, port = url.removeprefix("http://").split(":")
    until = time.monotonic() + seconds
    statuses: Counter[str] = Counter()
    if pattern == "half-open":
        await half_open(host, int(port), until, statuses)
    elif pattern == "spectators":
        await spectators(host, int(port), game, until, statuses)
    else:
        await http_flood(host, int(port), game, until, pattern, statuses)
    frames = statuses.pop("frames", 0)
    return {"requests": sum(statuses.values()), "statuses": dict(statuses), "frames": frames}


if __name__ == "__main__":
    result = asyncio.run(flood(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]))
    print(json.dumps(result))
