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

Every game is set up before the window, which counts moves only: a game that ends in the warm-up
or the window is followed by a spare set up before them (`bench.spares`).

A move's round trip runs from sending it until its answer (accepted: the events are in the
event store, acknowledged by Redis). Every sixteenth move of a game is probed: the board read
model is polled until it shows the move (command -> model latency).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
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

from bench.figures import Measurement, Stopping, cancelled
from bench.keepalive import Http, HttpError, LiveSeat, live_socket, read_to
from bench.spares import SetUp, Spares, pool_size
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
    spares: Spares = field(default_factory=Spares)  # `bench.spares`

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
    label = load.config["label"]
    with contextlib.suppress(Stopping):
        for round_ in itertools.count():
            set_up = functools.partial(on_the_bus, load, client, f"{label}-{index}-{round_}")
            at = (index + round_ * 7) % len(load.pool)
            game = await load.spares.next_game(load, at, set_up, first=round_ == 0)
            load.playing += round_ == 0  # set up: the first move comes next
            scripted, game_id = load.pool[game.pool_index], game.game_id
            for number, seat, _ in moves(load, scripted):
                sent = time.monotonic()
                reply = await on_bus(load, client, game_id, scripted.steps[number].command, seat)
                load.done(sent, game_id, reply.last_version, number)
            load.game_ended()
            load.finished.append((game_id, game.pool_index))


async def on_bus(
    load: Load, client: Any, game_id: str, command: c.AnyCommand, seat: int | None
) -> Any:
    """A command onto the command stream, sent again (same id) after a timeout: its reply."""
    from gameserver.runtime import bus

    envelope = bus.CommandEnvelope(game_id, f"c{next(load.ids)}", command, seat)
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
    return reply


async def on_the_bus(load: Load, client: Any, game_id: str, pool_index: int) -> SetUp:
    """The pool's game ``pool_index`` set up as ``game_id`` on the bus: its seed chosen, then
    its create, join and start commands onto the command stream."""
    from gameserver.runtime.seed_vault import RedisSeedVault

    game = load.pool[pool_index]
    await RedisSeedVault(load.redis, load.layout).choose(game_id, game.seed)
    for step in itertools.takewhile(lambda step: step.kind != "move", game.steps):
        command = step.command
        if isinstance(command, c.CreateGame):
            command = c.CreateGame(game_id, command.players, seed="")
        await on_bus(load, client, game_id, command, step.seat)
    return SetUp(pool_index, game_id)


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


async def set_up_over_http(load: Load, pool_index: int, conns: list[Http]) -> SetUp:
    """Create the pool's game ``pool_index`` with its chosen seed, claim every seat, start it,
    as a lobby does: its id, its seats' tokens and its version once started."""
    game = load.pool[pool_index]
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
    return SetUp(pool_index, game_id, tokens, json.loads(body)["last_version"])


async def games_in_turn(
    load: Load, index: int
) -> AsyncGenerator[tuple[Game, SetUp, list[Http]], None]:
    """Coroutine ``index``'s games in turn (`bench.spares.Spares.next_game`): the game, how it
    was set up (id, seats' tokens, version once started, a spare's live sockets) and one
    connection per seat (closed with the generator); it counts as finished at the next one."""
    conns = [Http(load.config["host"], load.config["port"]) for _ in range(4)]
    set_up = functools.partial(set_up_over_http, load, conns=conns)
    try:
        for round_ in itertools.count():
            at = (index + round_ * 7) % len(load.pool)
            game = await load.spares.next_game(load, at, set_up, first=round_ == 0)
            load.playing += round_ == 0
            yield load.pool[game.pool_index], game, conns
            load.game_ended()
            load.finished.append((game.game_id, game.pool_index))
    finally:
        for conn in conns:
            await conn.close()


async def spare(load: Load, client: Any, number: int) -> SetUp:
    """Spare ``number`` (`bench.spares`), the pool's games in turn: on the bus, or over HTTP on
    connections of its own, closed once it is set up (in ``ws`` every seat's live socket opened
    too and read up to the game's start, the opening's work done before the window as well)."""
    at, mode = number % len(load.pool), load.config["mode"]
    if mode == "bus":
        return await on_the_bus(load, client, f"{load.config['label']}-spare-{number}", at)
    conns = [Http(load.config["host"], load.config["port"]) for _ in range(4)]
    try:
        game = await set_up_over_http(load, at, conns)
    finally:
        for conn in conns:
            await conn.close()
    for token in game.tokens if mode == "ws" else []:
        socket = await live_socket(load.config, game.game_id, token)
        await read_to(socket, game.started)
        game.seats.append(LiveSeat(socket))
    return game


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
            async for game, set_up, conns in games:
                game_id, tokens = set_up.game_id, set_up.tokens
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


async def play_ws(load: Load, index: int, _: Any) -> None:
    with contextlib.suppress(Stopping):
        async with contextlib.aclosing(games_in_turn(load, index)) as games:
            async for game, set_up, _conns in games:
                game_id = set_up.game_id
                seats = set_up.seats or [
                    LiveSeat(await live_socket(load.config, game_id, t)) for t in set_up.tokens
                ]
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
        async with live_socket(load.config, game_id, token) as socket:
            await read_to(socket, started)

    sent = time.monotonic()
    async with contextlib.aclosing(games_in_turn(load, index)) as games:
        async for _game, game, _conns in games:
            await asyncio.gather(*(opened(game.game_id, t, game.started) for t in game.tokens))
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
        load.spares.open()  # the spares are taken from now on
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
    moving = config["mode"] != "setup"  # set-up games end before any move, and take no spare
    lengths = [sum(step.kind == "move" for step in game.steps) for game in load.pool]
    size = pool_size(len(config["games"]), lengths, config.get("spare_moves", 0)) if moving else 0
    await asyncio.wait_for(load.spares.fill(size, functools.partial(spare, load, client)), SET_UP_S)
    modes = {"bus": play_bus, "http": play_http, "ws": play_ws, "setup": play_setup}
    play = modes[config["mode"]]
    tasks = [asyncio.create_task(play(load, index, client)) for index in config["games"]]
    failure, cpu = await run_window(load, tasks)
    await load.spares.close()
    checked = 0
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
        "set_ups_in_window": load.set_ups_in_window if moving else 0,
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
