"""The live move's I/O alone: a floor under the gateway's CPU per move over the WebSocket.

``python -m bench --only floor`` (part of ``make bench``) measures a minimal live server beside
the gateway, in the same minutes, at `GAMES` games of `SEATS` seats. The minimal server has the
gateway's own server stack (uvicorn with `live_frames.FramesAtOnce` and `send_texts`,
Starlette's `WebSocket`, redis-py, `Lanes`) and does a move's I/O as the gateway does it over
the WebSocket, and nothing else: a seat's text frame in, the command ``XADD``ed to a stream,
the reply read from a pub/sub channel, the move's event read from a feed stream (``XREAD``) and
written to every seat's socket, the answer to the mover's. No seat token, no game, no
redaction, no limits, no ordering of the mover's frames before the others', no backlog. A
stand-in rules process answers each command with one event of `EVENT_BYTES` and one reply; the
load is the player's path's own client (`keepalive.LiveSeat`), a move at a time per game, every
seat reading every push.

The server's CPU per move is the floor the gateway's target (0.25 ms over the WebSocket) sits
on: what the hops cost on this machine and this stack before the platform does anything. The
gateway's figure is measured between two of the floor's, so that the ratio holds however fast
the machine runs that minute.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from tempfile import TemporaryFile
from typing import Any

import msgspec
import uvicorn
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected
from websockets.asyncio.client import connect

from bench import player
from bench.figures import cpu_seconds
from bench.keepalive import LiveSeat
from bench.processes import Topology, wait_http
from bench.targets import GATEWAY_CPU_MS, per_move
from devkit.redis_server import RedisServer, free_port
from eventstore.lanes import Lanes
from eventstore.redis_client import redis_client
from gameserver.gateway.live_frames import FRAMES, FramesAtOnce, send_texts

GAMES, SEATS = 16, 3
WARM_S, WINDOW_S = 2.0, 5.0
EVENT_BYTES = 300
COMMANDS, FEED, REPLIES = "floor:commands", "floor:feed", "floor:replies"
GONE = (WebSocketDisconnect, WebSocketDisconnected)
"""A write to a socket its seat closed: the first raises the one, any later the other."""


@dataclass(frozen=True)
class Floor:
    """One window of the minimal server: moves per second, CPU ms per move (server, Redis)
    and the fewest pushes a seat's socket read (every seat reads every move's event)."""

    rate: float
    server_ms: float
    redis_ms: float
    pushes: int
    errors: str = ""
    """What the minimal server and the stand-in rules wrote to stderr (nothing, when well)."""


# -- the minimal server (a process of its own: ``python -m bench.floor serve PORT REDIS_PORT``)


class Server:
    """The ASGI app: every seat's socket by game, the waiting moves by command id."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.games: dict[str, dict[int, WebSocket]] = {}
        self.waiting: dict[bytes, asyncio.Future[None]] = {}
        self.lanes = Lanes(redis_client(redis_url))
        self.tasks: set[asyncio.Task[None]] = set()
        """The readers, and the writes that went the ASGI way, held until done."""

    async def replies(self, pubsub: Any) -> None:
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None and message["type"] == "message":
                waiter = self.waiting.pop(message["data"], None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)

    async def feed(self) -> None:
        """Each new event written to every seat of its game at once, as the gateway's pumps
        write (`send_texts`'s way where a socket cannot take it now)."""
        reader = redis_client(self.redis_url, single_connection_client=True)
        last: bytes | str = "0-0"  # the feed of a Redis of its own: every event is a move's
        while True:
            for _, entries in await reader.xread({FEED: last}, block=1000, count=256) or []:
                for entry_id, fields in entries:
                    last = entry_id
                    texts = [fields[b"event"].decode()]
                    for socket in self.games.get(fields[b"game"].decode(), {}).values():
                        if not socket.scope["extensions"][FRAMES]["write"](texts):
                            self.hold(send_texts(socket, texts))

    def hold(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[None]) -> None:
        """A held task done: a push to a seat that left as the load ended is nothing to report
        (its socket is gone); any other failure goes to the loop's exception handler."""
        self.tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None and not isinstance(error, GONE):
            task.get_loop().call_exception_handler(
                {"message": "a task of the minimal server failed", "exception": error}
            )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                pubsub = redis_client(self.redis_url).pubsub()
                await pubsub.subscribe(REPLIES)  # before any move: no reply goes unheard
                self.hold(self.replies(pubsub))
                self.hold(self.feed())
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "websocket":
            await self.seat(WebSocket(scope, receive, send))
        else:  # any HTTP request: the server is up (`wait_http`)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    async def seat(self, socket: WebSocket) -> None:
        game, seat = socket.url.path.split("/")[2], int(socket.query_params["seat"])
        await socket.accept()
        self.games.setdefault(game, {})[seat] = socket
        loop = asyncio.get_running_loop()
        try:
            while (message := await socket.receive())["type"] == "websocket.receive":
                command_id = _move.decode(message.get("text") or message["bytes"]).command_id
                waiter = loop.create_future()
                key = f"{game}:{seat}:{command_id}".encode()
                self.waiting[key] = waiter
                await self.lanes.one("XADD", COMMANDS, "*", "game", game, "key", key)
                await waiter
                answer = {"command_id": command_id, "status": "accepted", "last_version": 1}
                await send_texts(socket, [_encoder.encode({"answer": answer}).decode()])
        except GONE:  # the seat left (the load's end) before its answer
            pass
        finally:
            self.games.get(game, {}).pop(seat, None)


class _Move(msgspec.Struct):
    command_id: str


_move = msgspec.json.Decoder(_Move)
_encoder = msgspec.json.Encoder()


def serve(port: int, redis_port: int) -> None:
    app = Server(f"redis://127.0.0.1:{redis_port}")
    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="warning", loop="uvloop",
        ws=FramesAtOnce, ws_per_message_deflate=False, lifespan="on",
    )  # fmt: skip


async def rules(redis_port: int) -> None:
    """The stand-in rules process: each command's event on the feed and its reply."""
    url = f"redis://127.0.0.1:{redis_port}"
    reader, writer = redis_client(url, single_connection_client=True), redis_client(url)
    event = b'{"type":"Placed","pad":"%s"}' % (b"x" * (EVENT_BYTES - 25))
    last: bytes | str = "0-0"  # a command sent before this read began is answered too
    while True:
        for _, entries in await reader.xread({COMMANDS: last}, block=1000, count=256) or []:
            pipe = writer.pipeline(transaction=False)
            for entry_id, fields in entries:
                last = entry_id
                entry = {"game": fields[b"game"], "event": event}
                pipe.xadd(FEED, entry, maxlen=10_000, approximate=True)
                pipe.publish(REPLIES, fields[b"key"])
            await pipe.execute()


# -- the load and the window ---------------------------------------------------------------------


async def drive(port: int, cpu: Any, games: int, seats: int, warm_s: float, window_s: float) -> Any:
    """Every game's seats on their sockets, a move at a time per game (seat after seat);
    ``cpu()`` read at the window's start and end; (moves, CPU before, CPU after, the fewest
    pushes a seat read)."""
    url = f"ws://127.0.0.1:{port}/games/g{{}}/live?seat={{}}"
    sockets = [[await connect(url.format(g, s), ping_interval=None) for s in range(seats)]
               for g in range(games)]  # fmt: skip
    tables = [[LiveSeat(socket) for socket in sockets[g]] for g in range(games)]
    moves, playing = [0], [True]

    async def play(table: list[LiveSeat]) -> None:
        number = 0
        while playing[0]:  # a cancellation alone may be lost in `wait_for` (Python 3.11)
            await table[number % seats].send(f"m{number}", b'{"type":"Place"}')
            moves[0] += 1
            number += 1

    players = [asyncio.create_task(play(table)) for table in tables]
    try:
        await asyncio.sleep(warm_s)
        start, before = moves[0], cpu()
        await asyncio.sleep(window_s)
        done, after = moves[0] - start, cpu()
    finally:
        playing[0] = False
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
    pushes = min(seat.pushed for table in tables for seat in table)
    for table in tables:
        for seat in table:
            await seat.close()
    return done, before, after, pushes


def measure(
    games: int = GAMES, seats: int = SEATS, warm_s: float = WARM_S, window_s: float = WINDOW_S
) -> Floor:
    """One window of the minimal server, on a Redis of its own (AOF, ``appendfsync always``);
    what its processes wrote to stderr is kept in the result (`floor_line` shows it)."""
    with RedisServer(appendonly=True, appendfsync="always") as redis, TemporaryFile() as stderr:
        assert redis.port is not None
        port = free_port()
        started = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.floor", *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
            for args in (["rules", str(redis.port)], ["serve", str(port), str(redis.port)])
        ]
        server, redis_pid = started[1].pid, redis.pid
        try:
            wait_http(port, "/", timeout=30.0)

            def cpu() -> tuple[float, float]:
                return cpu_seconds(server), cpu_seconds(redis_pid)

            run = drive(port, cpu, games, seats, warm_s, window_s)
            moves, before, after, pushes = asyncio.run(run)
        finally:
            for process in started:
                process.kill()
                process.wait()
        stderr.seek(0)
        errors = stderr.read().decode(errors="replace").strip()
    if not moves:
        raise RuntimeError("the minimal live server answered no move in the window")
    per_move = [1000 * (after[n] - before[n]) / moves for n in (0, 1)]
    return Floor(moves / window_s, per_move[0], per_move[1], pushes, errors)


def run() -> None:
    """The floor, the gateway over the WebSocket at as many games, the floor again."""
    print(f"== the live move's I/O alone: a floor under the gateway ({GAMES} games) ==")
    before = measured()
    results = player.measure_topology(Topology(), ("ws",), (GAMES,))
    floors = [floor for floor in (before, measured()) if floor is not None]
    gateway = results.get(("ws", GAMES))
    if gateway is not None and floors:
        print(compared(per_move(gateway, "gateway"), floors))


def measured() -> Floor | None:
    """`measure`, its line printed; a failure said instead (the other runs go on)."""
    try:
        floor = measure()
    except (RuntimeError, OSError) as error:
        print(f"minimal live server, {GAMES} games: FAILED: {error}", flush=True)
        return None
    print(floor_line(floor), flush=True)
    return floor


def floor_line(floor: Floor) -> str:
    return (
        f"minimal live server, {GAMES} games of {SEATS} seats: {floor.rate:,.0f} moves/s, "
        f"CPU ms per move: server {floor.server_ms:.3f}, redis {floor.redis_ms:.3f} "
        f"(every seat read {floor.pushes:,} pushes at least)"
        + (f"; its processes' errors:\n{floor.errors}" if floor.errors else "")
    )


def compared(gateway_ms: float, floors: list[Floor]) -> str:
    """The gateway's CPU per move against the floors' mean, and where the target falls."""
    floor_ms = sum(f.server_ms for f in floors) / len(floors)
    target = GATEWAY_CPU_MS["ws"]
    return (
        f"gateway over the WebSocket: {gateway_ms:.3f} ms of CPU a move, "
        f"{gateway_ms / floor_ms:.2f}x the floor's {floor_ms:.3f} ms (the platform's own work: "
        f"{gateway_ms - floor_ms:.3f} ms a move); the target, {target} ms, is "
        f"{target / floor_ms:.2f}x the floor in this run"
    )


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), int(sys.argv[3]))
    else:
        asyncio.run(rules(int(sys.argv[2])))
