"""Spectators' backlogs take turns, and a finished game's frames are encoded once per worker.

A spectator's live channel first reads and sends the game's history (its backlog: a Redis page
of 100 events at a time, each event decoded, redacted and encoded); on a finished game that is
the whole channel. A burst of spectators (hundreds of sockets opened at once, re-opened as they
close) made every one of them do that work at the same moment, and the players' requests
waited behind it. Now:

- `SpectatorBacklogs.turn`: at most `TURNS` spectator channels of a worker read and send their
  backlog at once; the others wait their turn (in order), holding nothing but their socket.
  A seat's channel never waits: it does not take a turn at all.
- `SpectatorBacklogs.finished_frames`: a finished game never changes, so what a spectator sees
  of it (each event redacted for nobody, encoded) is worked out once and kept in a small LRU
  of `FINISHED_GAMES` games under the game id, its last version and that event's hash (an
  end that a crash took back may come again at the same version); every spectator channel of
  that game is then served from memory, with no Redis read and no encoding. Concurrent
  channels of a game not yet kept wait for the same work.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable

TURNS = 4
"""Spectator channels of a worker that read and send their backlog at once."""
FINISHED_GAMES = 16
"""Finished games whose spectator frames a worker keeps (a few hundred short frames each)."""

Frames = list[tuple[int, str]]
"""A finished game as a spectator sees it: (version, frame) for each event, in order."""


class SpectatorBacklogs:
    """A worker's turns for spectators' backlogs and its finished games' frames."""

    def __init__(self, turns: int = TURNS, games: int = FINISHED_GAMES) -> None:
        if turns < 1:
            raise ValueError(f"spectators' backlogs need at least one turn, not {turns}")
        self._turns = asyncio.Semaphore(turns)
        self._games = games
        self._frames: OrderedDict[tuple[str, int, str], Frames] = OrderedDict()
        self._making: dict[tuple[str, int, str], asyncio.Future[Frames]] = {}
        self.waiting = 0
        """Spectator channels waiting for their turn now (tests and the flood bench)."""
        self.made = 0
        """Finished games whose frames this worker worked out (the rest came from memory)."""

    async def take_turn(self, spectator: bool) -> Callable[[], None]:
        """Wait for one of the turns for a spectator's backlog (a seat's channel, ``spectator``
        False, takes none and goes at once); returns what gives it back (once, however often
        it is called)."""
        if not spectator:
            return _nothing
        self.waiting += 1
        try:
            await self._turns.acquire()
        finally:
            self.waiting -= 1
        held = True

        def give_back() -> None:
            nonlocal held
            if held:
                held = False
                self._turns.release()

        return give_back

    @contextlib.asynccontextmanager
    async def turn(self, spectator: bool) -> AsyncIterator[None]:
        """`take_turn` for as long as the block runs."""
        give_back = await self.take_turn(spectator)
        try:
            yield
        finally:
            give_back()

    async def finished_frames(
        self, game_id: str, ending: tuple[int, str], make: Callable[[], Awaitable[Frames]]
    ) -> Frames:
        """The spectator frames of finished game ``game_id`` (``ending``: its last version and
        that event's hash): from memory, or worked out by ``make`` once for every channel that
        asks meanwhile."""
        key = (game_id, *ending)
        found = self._frames.get(key)
        if found is not None:
            self._frames.move_to_end(key)
            return found
        making = self._making.get(key)
        if making is not None:
            try:
                return await asyncio.shield(making)
            except asyncio.CancelledError:
                if not making.cancelled():
                    raise  # this channel was cancelled
                return await self.finished_frames(game_id, ending, make)  # its maker was
        future: asyncio.Future[Frames] = asyncio.get_running_loop().create_future()
        self._making[key] = future
        try:
            frames = await make()
        except Exception as error:
            future.set_exception(error)
            future.exception()  # read here: waiters (if any) get it too
            raise
        except BaseException:  # cancelled: a waiter then works it out itself next time
            future.cancel()
            raise
        finally:
            del self._making[key]
        future.set_result(frames)
        self.made += 1
        self._frames[key] = frames
        while len(self._frames) > self._games:
            self._frames.popitem(last=False)
        return frames


def _nothing() -> None:
    """A seat's turn: nothing to give back."""
