"""A game's new events go to its movers' sockets first, and to everyone else's after the move's
answer.

A worker's feed reader (`live_hub.PartitionReader`) hands each new event of a game to every
live channel of the game on the worker: the seats' sockets, and any number of spectators'. Each
channel's pump then frames the event for its viewer and writes it to its socket, in the order
the events were handed over. The mover's socket also waits for the move's answer, which comes
apart (the rules service's reply) and goes in the same write (`live_answers.Riding`). So every
other channel's framing and write came before the mover's answer: one more socket for a
two-seat game, fifty for a game fifty people watch, and the mover waited for all of them.

`MoversFirst` hands an event to the channels that are *moving* first (a command in flight, or
an answer waiting for its pushes: `Riding.moving`). While one of them still waits for its
answer, the game's other channels are handed nothing: the event, and any that follow it, are
held for them until that answer is handed to its socket (`Riding.released`), or
`live_answers.HOLD_S` at most, and are then handed over in order. Nothing is dropped or
reordered for anyone: the held channels get the same events a moment later, after the mover's
write. An event no channel is moving for goes to everyone at once, as before. A channel
without a `Riding` (an event stream) is never a mover.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Protocol

from gameserver.gateway import live_answers
from gameserver.gateway.live_answers import Riding

Item = tuple[int, bytes]
"""A game's event as a feed carries it: (version, encoded event)."""


class Channel(Protocol):
    """What `MoversFirst` hands events to (`live_hub.Follower`)."""

    riding: Riding | None

    def offer(self, item: Item) -> None: ...


@dataclass
class _Held:
    movers: list[Channel]
    items: list[Item]
    expiry: asyncio.TimerHandle


class MoversFirst:
    """One feed reader's hand-over of events, movers first (see the module's text)."""

    def __init__(self, followers: Mapping[str, Collection[Channel]]) -> None:
        """``followers``: the reader's channels of each game, as they are now."""
        self._followers = followers
        self._held: dict[str, _Held] = {}

    def hand(self, game_id: str, item: Item) -> None:
        """Hand ``item``, the game's next event, to the game's channels."""
        followers = self._followers.get(game_id, ())
        held = self._held.get(game_id)
        if held is not None:  # the others wait for a mover's answer: this event waits behind
            for mover in held.movers:
                mover.offer(item)
            held.items.append(item)
            return
        movers = [f for f in followers if f.riding is not None and f.riding.moving()]
        for mover in movers:
            mover.offer(item)
        others = [f for f in followers if f not in movers] if movers else followers
        waiting = [m.riding for m in movers if m.riding is not None and m.riding.in_flight()]
        if not waiting or not others:
            for other in others:
                other.offer(item)
            return
        expiry = asyncio.get_running_loop().call_later(live_answers.HOLD_S, self._release, game_id)
        held = self._held[game_id] = _Held(movers, [item], expiry)
        for riding in waiting:
            riding.released = functools.partial(self._release, game_id, held)

    def _release(self, game_id: str, held: _Held | None = None) -> None:
        """The held events go to the game's other channels (``held``: only that hold)."""
        found = self._held.get(game_id)
        if found is None or (held is not None and found is not held):
            return
        del self._held[game_id]
        found.expiry.cancel()
        others = [f for f in self._followers.get(game_id, ()) if f not in found.movers]
        for item in found.items:
            for other in others:
                other.offer(item)

    def drop(self) -> None:
        """Forget every hold (the reader failed: its channels read the streams instead)."""
        for held in self._held.values():
            held.expiry.cancel()
        self._held.clear()
