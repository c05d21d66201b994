"""A game's new events go to its mover's channels first, and to its other channels after the
move's answer.

A worker's feed reader (`live_hub.PartitionReader`) hands each new event of a game to every
live channel of the game on the worker: the seats' sockets and event streams, and any number of
spectators'. Each channel's pump then frames the event for its viewer and writes it, in the
order the events were handed over. A move's answer reaches the worker apart (the rules
service's reply, right after the events). So every channel of the game could be framed and
written to before the mover got its answer, and before the mover's own channel got the move's
events: one more socket for a two-seat game, fifty for a game fifty people watch.

`Moves`, one per worker, keeps the commands in flight through it, per game and seat: the HTTP
move route and the live channel's commands hold one (`Moves.moving`) from before the command
goes to the rules service until its answer is on its way to the client (written to the HTTP
response, or handed to the socket's pump: `live_answers.Riding`). The feed readers hand each
event through it (`Moves.hand`): an event of a game with a command in flight goes to the
channels of the moving seat first; the game's other channels are handed nothing: the event, and
any that follow it, are held for them until a command of the game ends, or
`live_answers.HOLD_S` at most, and are then handed over in order. Nothing is lost or reordered;
the other channels get the same events a moment later, after the mover's answer and its own
channel's write. A game with no command in flight through the worker has its events handed to
everyone at once, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from gameserver.gateway import live_answers

Item = tuple[int, bytes]
"""A game's event as a feed carries it: (version, encoded event)."""


class Channel(Protocol):
    """What `Moves` hands events to (`live_hub.Follower`): its viewer's seat (None for a
    spectator) and its queue."""

    viewer: int | None

    def offer(self, item: Item) -> None: ...


@dataclass
class _Held:
    channels: Collection[Channel]  # the game's channels on the reader, as they come and go
    movers: list[Channel]
    items: list[Item]
    expiry: asyncio.TimerHandle


class Moves:
    """A worker's commands in flight (the seats moving, per game) and the events held for the
    other channels of their games (see the module's text)."""

    def __init__(self) -> None:
        self.seats: dict[str, list[int]] = {}
        self._held: dict[str, _Held] = {}

    @contextlib.contextmanager
    def moving(self, game_id: str, seat: int) -> Iterator[None]:
        """``seat`` has a command of the game in flight until this is left: left once its
        answer is on its way; the events held for the game's other channels then go to them."""
        self.seats.setdefault(game_id, []).append(seat)
        try:
            yield
        finally:
            seats = self.seats[game_id]
            seats.remove(seat)
            if not seats:
                del self.seats[game_id]
            self.release(game_id)

    def hand(self, game_id: str, channels: Collection[Channel], item: Item) -> None:
        """Hand ``item``, the game's next event, to ``channels``, the game's channels on a
        feed reader."""
        held = self._held.get(game_id)
        if held is not None:  # the others wait for a move's answer: this event waits behind
            for mover in held.movers:
                mover.offer(item)
            held.items.append(item)
            return
        seats = self.seats.get(game_id)
        if not seats:
            for channel in channels:
                channel.offer(item)
            return
        movers = [c for c in channels if c.viewer is not None and c.viewer in seats]
        for mover in movers:
            mover.offer(item)
        if len(movers) == len(channels):
            return
        expiry = asyncio.get_running_loop().call_later(live_answers.HOLD_S, self.release, game_id)
        self._held[game_id] = _Held(channels, movers, [item], expiry)

    def release(self, game_id: str) -> None:
        """The held events of the game, if any, go to its other channels, in order."""
        held = self._held.pop(game_id, None)
        if held is None:
            return
        held.expiry.cancel()
        others = [c for c in held.channels if c not in held.movers]
        for item in held.items:
            for other in others:
                other.offer(item)

    def drop(self, game_ids: Iterable[str]) -> None:
        """Forget the holds of these games (their reader failed or stopped: their channels
        read the streams instead)."""
        for game_id in game_ids:
            held = self._held.pop(game_id, None)
            if held is not None:
                held.expiry.cancel()
