"""One load process of the player's-path benchmark: ``python -m bench.loadgen`` (run by
``bench.player``; one JSON config line on stdin, then ``go`` lines; the JSON result in
``result_file``, then ``done`` on stdout).

It plays scripted bot games (worked out in process from chosen seeds, `bench.service.script`)
one move in flight per game, over one of three paths:

- ``bus``: today's ``make bench`` path: envelopes straight onto the rules service's command
  stream through `RulesClient`, no gateway, no seat tokens;
- ``http``: as a frontend does: ``POST /games`` (with the chosen seed), a seat claimed per
  player (its token), ``POST /start``, then every move as ``POST /games/{id}/commands`` with
  ``Authorization: Bearer <token>``, each seat on its own keep-alive connection;
- ``ws``: the same set-up over HTTP, then every move over the seat's live WebSocket
  (``/games/{id}/live?token=``), whose answer comes back on the same socket while the live
  channel pushes every event to every seat;
- ``setup``: games set up and left before their first move (every seat's live WebSocket
  opened until the start arrives): what a game costs before it is played.

A move's round trip runs from sending it until its answer (accepted: the events are in the
event store, acknowledged by Redis). Every sixteenth move of a game is probed: the board read
model is polled until it shows the move (command -> model latency).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
import time
import uuid
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench.figures import Measurement, cancelled
from bench.keepalive import Http, HttpError
from renature import commands as c

REPLY_TIMEOUT_S = 10.0
SET_UP_S = 120.0  # at most, for every game to be set up before the window
RETRIES = 5
"""A command without an answer in time (504, CommandTimeout) is sent again with the same id,
as a client should; a move's round trip then runs from its first sending."""
IN_FLIGHT_WAIT_S = 0.5
"""How long a keyed request waits before it is sent again after ``idempotency_key_in_flight``."""
IN_FLIGHT_PATIENCE_S = 15.0
"""How long a keyed request is sent again while its key is in flight: past the gateway's lease
(its command timeout and a margin), after which the first request has been answered or its
lease has lapsed."""


@dataclass(frozen=True)
class Step:
    kind: str  # "create", "join", "start", "move"
    seat: int | None
    command: c.AnyCommand
    body: bytes  # the move's command as the HTTP API takes it (msgspec JSON)


@dataclass(frozen=True)
class Game:
    seed: str
    players: int
    steps: list[Step]


def games_for(count: int) -> list[Game]:
    """The pool of scripted games, the same in every process (chosen seeds)."""
    from bench.service import script

    pool = []
    for index in range(count):
        scripted = script(index)
        steps = []
        for command, seat in scripted.steps:
            kind = {
                c.CreateGame: "create",
                c.JoinGame: "join",
                c.StartGame: "start",
            }.get(type(command), "move")
            body = msgspec.json.encode(command) if kind == "move" else b""
            steps.append(Step(kind, seat, command, body))
        pool.append(Game(scripted.seed, scripted.players, steps))
    return pool


# -- the load ----------------------------------------------------------------------------------


@dataclass
class Load(Measurement):
    config: dict[str, Any]
    pool: list[Game]
    redis: Any
    layout: Any
    moves_in_window: int = 0
    moves_total: int = 0
    retries: int = 0
    playing: int = 0  # games that finished their first set-up
    finished: list[tuple[str, int]] = field(default_factory=list)  # (game id, pool index)

    def done(self, sent: float, game_id: str, version: int, number: int) -> None:
        """A move answered (``number``: its step in the game, `Measurement.probe`)."""
        if self.counted(sent):
            self.probe(number, self.redis, self.layout, game_id, version, sent)

    def counted(self, sent: float) -> bool:
        """A move (or a set-up, ``setup``) sent at ``sent`` done now: counted in the window
        where it ends there, timed where it began there (whether it did)."""
        now = time.monotonic()
        self.moves_total += 1
        if self.window[0] <= now < self.window[1]:
            self.moves_in_window += 1
        if self.window[0] <= sent < self.window[1]:
            self.round_trips.append(now - sent)
            return True
        return False


async def play_bus(load: Load, index: int, client: Any) -> None:
    """Today's bench path: envelopes onto the command stream, no gateway."""
    from gameserver.runtime import bus
    from gameserver.runtime.seed_vault import RedisSeedVault

    label = load.config["label"]
    for round_ in itertools.count():
        pool_index = (index + round_ * 7) % len(load.pool)
        game = load.pool[pool_index]
        game_id = f"{label}-{index}-{round_}"
        await RedisSeedVault(load.redis, load.layout).choose(game_id, game.seed)
        for number, step in enumerate(game.steps):
            if load.stopping:
                return
            command = step.command
            if isinstance(command, c.CreateGame):
                command = c.CreateGame(game_id, command.players, seed="")
            if round_ == 0 and number > 0 and game.steps[number - 1].kind == "start":
                load.playing += 1  # set up: the first move comes next
            envelope = bus.CommandEnvelope(game_id, f"c{next(load.ids)}", command, step.seat)
            sent = time.monotonic()
            for attempt in range(RETRIES + 1):
                try:
                    reply = await client.send(envelope, timeout=REPLY_TIMEOUT_S)
                    break
                except TimeoutError:  # CommandTimeout: the same id again
                    load.retries += 1
                    if attempt == RETRIES:
                        raise
            if reply.status != "accepted":
                raise RuntimeError(f"{game_id}: {reply.code}: {reply.message}")
            if step.kind == "move":
                load.done(sent, game_id, reply.last_version, number)
        load.game_ended()
        load.finished.append((game_id, pool_index))


async def retried(
    load: Load,
    conn: Http,
    method: str,
    path: str,
    body: bytes = b"",
    token: str | None = None,
    key: str = "",
) -> tuple[int, bytes]:
    """A request sent again (same body, so the same command id; same idempotency key) after
    a 504 (`RETRIES` times at most), or, as the answer asks, a moment after a 409
    ``idempotency_key_in_flight`` (the request sent before the 504 is still being answered),
    for as long as the key's lease may last (`IN_FLIGHT_PATIENCE_S`)."""
    timeouts, patience = 0, time.monotonic() + IN_FLIGHT_PATIENCE_S
    while True:
        status, answer = await conn.request(method, path, body, token, key)
        in_flight = status == 409 and b"idempotency_key_in_flight" in answer
        if in_flight and time.monotonic() < patience:
            await asyncio.sleep(IN_FLIGHT_WAIT_S)
        elif status == 504 and timeouts < RETRIES:
            timeouts += 1
        else:
            return status, answer
        load.retries += 1


async def set_up_over_http(load: Load, game: Game, conns: list[Http]) -> tuple[str, list[str], int]:
    """Create the game with its chosen seed, claim every seat, start it, as a lobby does: its
    id, its seats' tokens and its version once started."""
    create = json.dumps({"players": game.players, "seed": game.seed}).encode()
    status, body = await retried(
        load, conns[0], "POST", "/games", create, key=f"create-{uuid.uuid4().hex}"
    )
    if status != 201:
        raise HttpError(f"POST /games: {status} {body[:200]!r}")
    game_id = json.loads(body)["game_id"]
    tokens = []
    for seat in range(game.players):
        status, body = await retried(
            load,
            conns[seat],
            "POST",
            f"/games/{game_id}/seats/{seat}",
            json.dumps({"name": f"s{seat}"}).encode(),
            key=f"join-{uuid.uuid4().hex}",
        )
        if status != 201:
            raise HttpError(f"join: {status} {body[:200]!r}")
        tokens.append(json.loads(body)["token"])
    status, body = await retried(load, conns[0], "POST", f"/games/{game_id}/start", b"", tokens[0])
    if status != 200:
        raise HttpError(f"start: {status} {body[:200]!r}")
    return game_id, tokens, json.loads(body)["last_version"]


async def games_in_turn(
    load: Load, index: int
) -> AsyncGenerator[tuple[Game, str, list[str], list[Http], int], None]:
    """Coroutine ``index``'s games of the pool, one after another, each set up over HTTP: the
    game, its id, its seats' tokens, one connection per seat (closed with the generator) and
    its version once started. A game counts as finished when the next one is asked for."""
    conns = [Http(load.config["host"], load.config["port"]) for _ in range(4)]
    try:
        for round_ in itertools.count():
            pool_index = (index + round_ * 7) % len(load.pool)
            game = load.pool[pool_index]
            game_id, tokens, started = await set_up_over_http(load, game, conns)
            load.playing += round_ == 0
            yield game, game_id, tokens, conns, started
            load.game_ended()
            load.finished.append((game_id, pool_index))
    finally:
        for conn in conns:
            await conn.close()


class Stopping(Exception):
    """The load stops: the coroutine playing a game returns before its next step."""


def moves(load: Load, game: Game) -> Iterator[tuple[int, int, bytes]]:
    """The game's moves in order, as (step number, seat, command body); `Stopping` before any
    step once the load stops."""
    for number, step in enumerate(game.steps):
        if load.stopping:
            raise Stopping
        if step.kind == "move":
            assert step.seat is not None
            yield number, step.seat, step.body


async def play_http(load: Load, index: int, _: Any) -> None:
    with contextlib.suppress(Stopping):
        async with contextlib.aclosing(games_in_turn(load, index)) as games:
            async for game, game_id, tokens, conns, _ in games:
                path = f"/games/{game_id}/commands"
                for number, seat, command in moves(load, game):
                    body = b'{"command_id":"m%d","command":%s}' % (number, command)
                    sent = time.monotonic()
                    status, answer = await retried(
                        load, conns[seat], "POST", path, body, tokens[seat]
                    )
                    if status != 200:
                        raise HttpError(f"{game_id} move {number}: {status} {answer[:200]!r}")
                    last = json.loads(answer)["last_version"]
                    load.done(sent, game_id, last, number)


class LiveSeat:
    """A seat's live WebSocket: a reader task hands answers to the waiting move and drops the
    pushed events (as a frontend would render them)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pushed = 0
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for text in self.socket:
                if text.startswith('{"answer"'):
                    answer = json.loads(text)["answer"]
                    waiter = self.waiting.pop(answer["command_id"], None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(answer)
                else:
                    self.pushed += 1

    async def send(self, command_id: str, body: bytes) -> dict[str, Any]:
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[command_id] = waiter
        await self.socket.send(b'{"command_id":"%s","command":%s}' % (command_id.encode(), body))
        return await asyncio.wait_for(waiter, REPLY_TIMEOUT_S + 5)  # the gateway's 504 first

    async def close(self) -> None:
        self.reader.cancel()
        with contextlib.suppress(BaseException):
            await self.reader
        with contextlib.suppress(Exception):
            await self.socket.close()


def live_socket(load: Load, game_id: str, token: str | None = None) -> Any:
    """A seat's live WebSocket (a spectator's without ``token``), opened as a browser opens
    it: compression offered, no pings of its own (the server pings). Awaited, or entered with
    ``async with``."""
    from websockets.asyncio.client import connect

    host, port = load.config["host"], load.config["port"]
    query = "" if token is None else f"?token={token}"
    url = f"ws://{host}:{port}/games/{game_id}/live{query}"
    return connect(url, compression="deflate", ping_interval=None, max_queue=None)


async def play_ws(load: Load, index: int, _: Any) -> None:
    with contextlib.suppress(Stopping):
        async with contextlib.aclosing(games_in_turn(load, index)) as games:
            async for game, game_id, tokens, _conns, _ in games:
                seats = [LiveSeat(await live_socket(load, game_id, token)) for token in tokens]
                try:
                    await play_live(load, game, game_id, seats)
                finally:
                    for seat in seats:
                        await seat.close()


async def play_setup(load: Load, index: int, _: Any) -> None:
    """Games set up and left before their first move (`games_in_turn`), every seat's live
    WebSocket opened at once and read until its version once started: a set-up counts as a
    move does (`Load.counted`), its round trip the whole set-up."""

    async def opened(game_id: str, token: str, started: int) -> None:
        async with live_socket(load, game_id, token) as socket:
            while json.loads(await socket.recv())["version"] < started:
                pass

    sent = time.monotonic()
    async with contextlib.aclosing(games_in_turn(load, index)) as games:
        async for _game, game_id, tokens, _conns, started in games:
            await asyncio.gather(*(opened(game_id, token, started) for token in tokens))
            load.counted(sent)
            if load.stopping:
                return
            sent = time.monotonic()


async def play_live(load: Load, game: Game, game_id: str, seats: list[LiveSeat]) -> None:
    """The game's moves, each sent over its seat's live socket (a 504 sent again)."""
    for number, mover, command in moves(load, game):
        sent = time.monotonic()
        for _ in range(RETRIES):
            answer = await seats[mover].send(f"m{number}", command)
            if answer.get("http_status") != 504:
                break
            load.retries += 1
        if answer.get("status") != "accepted":
            raise RuntimeError(f"{game_id} move {number}: {answer}")
        load.done(sent, game_id, answer["last_version"], number)


async def check_finished(load: Load, limit: int = 20) -> int:
    """The last ``limit`` finished games end with their in-process twins' scores."""
    from bench.service import script
    from eventstore import RedisEventStore
    from renature import events as e
    from renature.game import replay

    store = RedisEventStore(
        load.redis, prefix=load.layout.prefix, partitions=load.layout.partitions
    )
    checked = 0
    for game_id, pool_index in load.finished[-limit:]:
        expected = script(pool_index).scores
        scores = None
        for _ in range(100):  # the service finishes a game right after its last reply
            state = replay(e.decode(s.data) for s in await store.read(game_id))
            if state is not None and state.phase == "finished":
                scores = [seat.score for seat in state.seats]
                break
            await asyncio.sleep(0.05)
        if scores != expected:
            raise RuntimeError(f"{game_id} ended {scores}, in process {expected}")
        checked += 1
    return checked


async def connect(config: dict[str, Any]) -> Any:
    """A Redis client for the load: a cluster's, or one whose requests wait for a free
    connection rather than fail (hundreds of games)."""
    from eventstore.redis_client import is_cluster_url, redis_client

    if is_cluster_url(config["redis_url"]):
        redis = redis_client(config["redis_url"])
        await redis.initialize()  # the slot map first: a pub/sub on a fresh client needs it
        return redis
    from redis.asyncio import BlockingConnectionPool, Redis

    pool = BlockingConnectionPool.from_url(config["redis_url"], max_connections=128)
    return Redis.from_pool(pool)


async def rules_client(redis: Any, layout: Any) -> Any:
    """A started `RulesClient` on the services' command streams."""
    from eventstore import CommandPartitions
    from gameserver.runtime.rules_client import RulesClient
    from gameserver.runtime.settings import Settings

    # the services' count of command streams: they read it from the same environment
    streams = CommandPartitions(layout, Settings.from_env().store.command_partitions)
    client = RulesClient(redis, streams=streams)
    await client.start()
    return client


async def run_window(load: Load, tasks: list[asyncio.Task[None]]) -> tuple[str, float]:
    """Wait for every game to be set up, then for the window ``go`` names; the first failure
    of a game (empty when none failed) and the CPU seconds the window cost."""
    try:
        # Every game set up (created, seats taken, started) before the window: it measures
        # moves, not the set-up of hundreds of games at once.
        deadline = time.monotonic() + SET_UP_S
        while load.playing < len(tasks) and time.monotonic() < deadline:
            if any(task.done() for task in tasks):
                break
            await asyncio.sleep(0.05)
        print("ready", flush=True)
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        _, start, end = line.split()
        load.window = (float(start), float(end))
        cpu_before = time.process_time()
        await asyncio.sleep(max(0.0, load.window[1] - time.monotonic()))
        load.stopping = True
        failure = ""
        done, _ = await asyncio.wait(tasks, timeout=REPLY_TIMEOUT_S)
        for task in done:
            if task.exception() is not None:
                failure = repr(task.exception())
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() and not failure:
                failure = repr(task.exception())
        await load.probes_landed(REPLY_TIMEOUT_S)
    finally:
        await cancelled(tasks)
    return failure, time.process_time() - cpu_before


async def main_async(config: dict[str, Any]) -> dict[str, Any]:
    from eventstore import KeyLayout

    redis = await connect(config)
    layout = KeyLayout(prefix=config.get("prefix", "rn"), partitions=config.get("partitions", 16))
    load = Load(config, games_for(config["scripts"]), redis, layout)
    client = await rules_client(redis, layout) if config["mode"] == "bus" else None
    modes = {"bus": play_bus, "http": play_http, "ws": play_ws, "setup": play_setup}
    play = modes[config["mode"]]
    tasks = [asyncio.create_task(play(load, index, client)) for index in config["games"]]
    failure, cpu = await run_window(load, tasks)
    checked = 0
    moving = config["mode"] != "setup"  # set-up games end before any move
    if not failure and moving:
        try:
            checked = await check_finished(load)
        except Exception as error:  # reported, not hidden
            failure = repr(error)
    if client is not None:
        await client.aclose()
    await redis.aclose()
    return {
        "moves": load.moves_in_window,
        "moves_total": load.moves_total,
        "games_finished": load.games_finished,
        "ended_in_window": load.ended_in_window if moving else 0,
        "checked": checked,
        "round_trips": load.round_trips,
        "to_model": load.to_model,
        "cpu_s": cpu,
        "retries": load.retries,
        "failure": failure,
    }


def main() -> None:
    config = json.loads(sys.stdin.readline())
    import uvloop

    result = uvloop.run(main_async(config))
    # The result goes to a file, not through the pipe: with hundreds of games it is larger than a
    # pipe's buffer, and the event loop leaves stdout non-blocking, so one long line would arrive
    # cut at 64 KiB. The pipe only says that the file is complete.
    Path(config["result_file"]).write_text(json.dumps(result))
    print("done", flush=True)


if __name__ == "__main__":
    main()
