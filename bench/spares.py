"""Spare games for the player's path's load (`bench.loadgen`), set up before the window so
that the window holds moves only.

A game that ends is followed by another, and a game's set-up (created, every seat joined, started,
every seat's live socket opened) costs our services about twenty moves' worth of CPU. At 16 games
dozens of games end in a five-second window (48 over HTTP, 80 on the bus): set up inside it, their
successors would count as moves. So each load process sets up a pool of spares before it says it is
ready, shared by its coroutines, `AT_ONCE` at a time (`bench.loadgen.spare`): on the bus, or over
HTTP on connections of their own, closed once the spare is set up (the gateway closes a connection
idle for five seconds, ``RENATURE_KEEP_ALIVE_S``, so the coroutine that takes a spare plays it on
its own connections, which its play keeps open); in ``ws`` every seat's live socket is opened too
and read up to the game's start. From the warm-up's start (once the load knows its window) a
coroutine whose game ended takes the next spare (`Spares.next_game`), with its pool index (its
in-process twin, for `bench.loadgen.check_finished`); only when none is left does it set up a game
itself, and such a set-up that falls inside the window is counted
(`bench.figures.Measurement.set_up`) and said beside the run's figures (`bench.targets.ended_in`).
The spares never taken are closed at the end. The ``setup`` mode, which measures set-ups
themselves, has none.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bench.figures import Measurement, Stopping
from bench.keepalive import LiveSeat

MOVES_PER_S = 3_500
"""The fastest plausible rate of one instance of each service, in moves per second, spread over
the load processes: the bench path reached 2,200 moves/s at 16 games on the 2-core development
machine and boardgame.io up to 2,400 on such machines; the spares must last at this rate."""
MOST = 300
"""Spares a load process sets up at most, unless it plays more games: at 256 games a pool as
large as the bound (461) would double the set-up before the window and the sockets held open,
while the games end at an even pace there (about 190 in seven seconds at 3,500 moves/s); a pool
that runs out says so beside the run's figures."""
PEER_GAME_MOVES = 72
"""The moves of a boardgame.io grid game (`bench/peer/game.js`: one tile a move, a 72-tile
deck)."""
AT_ONCE = 16
"""Spares set up at a time (as many as the player's path's middle figure plays)."""


def most_moves(instances: int, processes: int, seconds: float) -> int:
    """The moves one of ``processes`` load processes may play in ``seconds`` at `MOVES_PER_S`
    for each of ``instances`` instances of the services (a scaled topology's rate grows with
    them)."""
    return math.ceil(MOVES_PER_S * instances * seconds / processes)


def pool_size(games: int, lengths: Sequence[int], moves: int, *, capped: bool = True) -> int:
    """Spares enough for ``games`` games that play ``moves`` moves between the warm-up's start
    and the window's end, whichever games of the pool they play (``lengths``: each one's moves):
    each game in play may end once with moves played before (``games`` ends), and every further
    end takes a whole game's moves, the shortest game's at the least. At most
    ``max(games, MOST)`` where ``capped``: see `MOST`."""
    bound = games + math.ceil(moves / min(lengths))
    return min(bound, max(games, MOST)) if capped else bound


def peer_pool(games: int, seconds: float) -> int:
    """The spares of boardgame.io's client (`bench/peer/client.js`) playing ``games`` for
    ``seconds`` of warm-up and window: the same bound, its grid game's `PEER_GAME_MOVES` each,
    not capped (its games are shorter than ours, and at 256 games, where every game may have
    ended and be waiting for a spare when the warm-up begins, the bound itself, 597, is what it
    may take; a match costs its server memory, not a socket per seat kept by our gateway)."""
    return pool_size(games, [PEER_GAME_MOVES], most_moves(1, 1, seconds), capped=False)


@dataclass
class SetUp:
    """A game set up: its index in the pool (its in-process twin), its id, its seats' tokens
    (none on the bus), its version once started, and for a ``ws`` spare every seat's live
    socket, opened and read up to that version (else none: the coroutine opens them)."""

    pool_index: int
    game_id: str
    tokens: list[str] = field(default_factory=list)
    started: int = 0
    seats: list[LiveSeat] = field(default_factory=list)

    async def close(self) -> None:
        for seat in self.seats:
            await seat.close()


@dataclass
class Spares:
    """The spares of a load process, shared by its coroutines, taken in the order they were
    set up (none in ``setup`` mode: there every game is set up by its coroutine)."""

    ready: deque[SetUp] = field(default_factory=deque)
    opened: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the load knows its window (the warm-up begins): spares are taken from then."""

    async def fill(
        self, size: int, set_up: Callable[[int], Awaitable[SetUp]], at_once: int = AT_ONCE
    ) -> None:
        """Set up ``size`` spares (``set_up`` of each one's number), ``at_once`` at a time."""
        numbers = iter(range(size))

        async def setting_up() -> None:
            for number in numbers:  # shared: each number is taken by one of them
                self.ready.append(await set_up(number))

        await asyncio.gather(*(setting_up() for _ in range(min(at_once, size))))

    def take(self) -> SetUp | None:
        """The next spare, or None when none is left."""
        return self.ready.popleft() if self.ready else None

    def open(self) -> None:
        """The load knows its window: the warm-up begins, and the spares are taken."""
        self.opened.set()

    async def next_game(
        self,
        load: Measurement,
        pool_index: int,
        set_up: Callable[[int], Awaitable[SetUp]],
        *,
        first: bool = False,
    ) -> SetUp:
        """A coroutine's next game: its ``first``, the pool's game ``pool_index`` set up by the
        coroutine itself (``set_up``); a later one, once the load knows its window (the warm-up
        has begun), a spare while any is left, and before that it waits for them (set up then,
        while hundreds of games are still being set up, a game's set-up can take seconds and
        run on into the window: a set-up of boardgame.io's did, 108 of them at 256 games); else
        a set-up of its own, counted where that fell inside the window (`Measurement.set_up`).
        `Stopping` once the load stops: no game is set up after the window."""
        if not first and self.ready and not self.opened.is_set():
            await self.opened.wait()
        if load.stopping:
            raise Stopping
        spare = self.take() if not first and self.opened.is_set() else None
        if spare is not None:
            return spare
        began = load.clock()
        game = await set_up(pool_index)
        load.set_up(began)
        return game

    async def close(self) -> None:
        """Close the spares never taken (their live sockets)."""
        left, self.ready = list(self.ready), deque()
        await asyncio.gather(*(spare.close() for spare in left))
