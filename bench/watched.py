"""A watched game: what its spectators cost its players (``--only watched``, a part of
``make bench``).

One game at a time is played, a pause of `THINK_S` after each answer (people think between
moves; the player's path sends the next move at once), with no spectator and then with
`WATCHERS` spectators' sockets open on it, all on the one gateway worker of the player's path's
stack (one instance of each service, durability ``always``): its moves sent over the seats'
live WebSockets, then over HTTP with the seats' live sockets open (as the web client plays).
It prints the mover's round trip, from sending a move to its answer, in each case: a game's
spectators are written to after its mover's answer (`gateway.live_movers`), so they should cost
the mover little. The spectators' sockets are read in the bench's own process, on the same
cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.keepalive import Http, LiveSeat, live_socket
from bench.loadgen import Load, games_for, moves, set_up_over_http
from bench.processes import Redises, Topology, start_stack

WATCHERS = 50
"""Spectators' sockets on the watched game."""
THINK_S = 0.02
"""The pause between an answer and the next move."""
GAMES = 3
"""Games played at each count (the first three of the player's path's pool)."""
LABELS = {"ws": "the live WebSocket", "http": "HTTP (the seats' live sockets open)"}


def run() -> None:
    print(
        f"== a watched game: one game at a time, {THINK_S * 1e3:.0f} ms between moves, over "
        f"the seats' live sockets and over HTTP, with 0 and {WATCHERS} spectators' sockets "
        "open on it =="
    )
    workdir = Path(tempfile.mkdtemp(prefix="renature-bench-watched-"))
    with Redises("single") as redis:
        stack, port = start_stack(Topology(), redis.url, workdir)
        try:
            for over in ("ws", "http"):
                for watchers in (0, WATCHERS):
                    times = asyncio.run(play_watched(port, watchers, over))
                    p50, p99 = statistics.median(times), statistics.quantiles(times, n=100)[98]
                    print(
                        f"moves over {LABELS[over]}, {watchers} spectators: the mover's round "
                        f"trip p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms ({len(times)} moves)",
                        flush=True,
                    )
        finally:
            stack.stop()


async def play_watched(port: int, watchers: int, over: str) -> list[float]:
    """The round trips of every move of `GAMES` games, each watched by ``watchers``, sent
    ``over`` the seats' live sockets (``ws``) or HTTP (``http``)."""
    load = Load(
        config={"host": "127.0.0.1", "port": port}, pool=games_for(GAMES), redis=None, layout=None
    )
    times: list[float] = []
    for index, game in enumerate(load.pool):
        conns = [Http("127.0.0.1", port) for _ in range(game.players)]
        set_up = await set_up_over_http(load, index, conns)
        game_id, tokens = set_up.game_id, set_up.tokens
        audience = [await live_socket(load.config, game_id) for _ in range(watchers)]
        reading = [asyncio.create_task(_drain(socket)) for socket in audience]
        seats = [LiveSeat(await live_socket(load.config, game_id, token)) for token in tokens]
        try:
            path = f"/games/{game_id}/commands"
            for number, mover, command in moves(load, game):
                sent = time.perf_counter()
                if over == "ws":
                    answer = await seats[mover].send(f"m{number}", command)
                    refused = None if answer.get("status") == "accepted" else repr(answer)
                else:
                    body = b'{"command_id":"m%d","command":%s}' % (number, command)
                    status, text = await conns[mover].request("POST", path, body, tokens[mover])
                    refused = None if status == 200 else f"{status} {text[:200]!r}"
                times.append(time.perf_counter() - sent)
                if refused is not None:
                    raise RuntimeError(f"{game_id} move {number}: {refused}")
                await asyncio.sleep(THINK_S)
        finally:
            for seat in seats:
                await seat.close()
            for task in reading:
                task.cancel()
            for socket in audience:
                with contextlib.suppress(Exception):
                    await socket.close()
            for conn in conns:
                await conn.close()
    return times


async def _drain(socket: Any) -> None:
    with contextlib.suppress(Exception):
        async for _ in socket:
            pass
