"""A move's answer in the write of its pushes, after them.

A seat that moves over its live WebSocket gets two things back on that socket: the move's
events, pushed as every viewer gets them, and the command's answer. They reach the gateway
apart, the events from the partition feed and the answer from the rules service's reply, both
sent by the one append script, the feed's first almost always (docs/services.md, stop 40).
Sent as they came, they were two socket writes a move, in no promised order.

`Riding` brings them together, whichever comes first, for one socket:

- the pushes come first: where they include an event that the socket's command in flight
  caused (the cause of a command's first event carries its id), their frames wait for its
  answer, and the task that made the answer writes them with it at once (the pump, which
  waits meanwhile, would have been one more turn of the event loop before the mover's write:
  0.09 ms of the 1.5 ms of a move's round trip at one game in `make bench`);
- the answer comes first: where the command was accepted and the socket has not been sent its
  last event yet, the answer waits for the pushes that reach that event.

Either way they go in one write, the events first, then the answer, so a client holds a move's
events when its answer comes. Neither waits longer than `HOLD_S`: then each goes on its own, as
before. An answer with no events to wait for goes at once: a refusal, or a command accepted
earlier and sent again (its events went then). The game's other channels on the worker get the
move's events after this write (`live_movers`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from gameplatform.chain import Event

T = TypeVar("T")

Write = Callable[[list[str]], Awaitable[None]]
"""A socket's write of text frames, in order (`live_frames.send_texts`)."""

HOLD_S = 0.05
"""How long a move's pushes or its answer wait for the other (both come from one append
script: the wait is the time between the gateway's two reads of them, a loop turn or two)."""


@dataclass
class _Pushes:
    """A batch's frames waiting for its answer: whether they were sent (by `Riding.hand_over`,
    with the answer; False: the pump sends them alone), and when the wait runs out."""

    texts: list[str]
    sent: asyncio.Future[bool]
    expiry: asyncio.TimerHandle


class Riding:
    """A socket's command in flight (its channel answers one message at a time), the last
    version pushed on it, and whichever of a move's pushes and answer waits for the other."""

    def __init__(self, after: int = 0) -> None:
        self._command: str | None = None  # the rules' command id (`bus_command_id`)
        self._pushed = after  # the last version handed to the socket (the viewer's at first)
        self._pushes: _Pushes | None = None  # pushes waiting for the answer
        self._answer: tuple[str, int, asyncio.Future[bool]] | None = None  # answer waiting
        self._idle = asyncio.Event()  # no message in hand
        self._idle.set()

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """A message of the socket in hand until its answer is sent (`settled`)."""
        self._idle.clear()
        try:
            yield
        finally:
            self._idle.set()

    async def settled(self, within: float) -> None:
        """Wait for the message in hand, if any, to be answered; ``within`` seconds at most."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), within)

    def expect(self, command_id: str) -> None:
        """``command_id`` goes to the rules service: its events may come before its answer."""
        self._command = command_id

    async def hand_over(self, text: str, last_version: int | None, write: Write) -> bool:
        """``text`` answers the message in hand (an accepted command's events end at
        ``last_version``; None for anything else). True where it went with the pushes of
        those events: written here, after them, through ``write`` where they waited for it
        (the pump waits until that write is done), or taken along by the pushes that came
        within `HOLD_S`; False where the caller must send it."""
        if (pushes := self._done_with_command()) is not None:
            pushes.expiry.cancel()  # they wait for this write now, however long it takes
            try:
                await write([*pushes.texts, text])
            finally:
                if not pushes.sent.done():  # (the pump's wait is cancelled when it closes)
                    pushes.sent.set_result(True)
            return True
        if last_version is None or last_version <= self._pushed:
            return False
        taken: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._answer = (text, last_version, taken)
        try:
            return await _within(taken, False)
        finally:
            if self._answer is not None and self._answer[2] is taken:
                self._answer = None

    def failed(self) -> None:
        """The message in hand has no answer to send (its handling failed): nothing waits."""
        if (pushes := self._done_with_command()) is not None:
            pushes.sent.set_result(False)  # they go alone

    def _done_with_command(self) -> _Pushes | None:
        """The message in hand is answered or failed: no command in flight; the pushes that
        still wait for its answer, if any, are the caller's to release."""
        self._command = None
        pushes, self._pushes = self._pushes, None
        return None if pushes is None or pushes.sent.done() else pushes

    async def along(self, events: list[Event], texts: list[str]) -> bool:
        """``texts``, the frames of ``events``, and the answer that goes after them, if any:
        one that waits for them is appended to ``texts``; the answer to the command in flight
        that caused one of them is waited for, at most `HOLD_S`, and written with them by its
        maker (`hand_over`). True where they were written so; False where the caller writes
        ``texts``. The socket's last version pushed is theirs from now on."""
        self._pushed = max(self._pushed, events[-1].version)
        waiting = self._answer
        if waiting is not None and waiting[1] <= self._pushed and not waiting[2].done():
            self._answer = None
            waiting[2].set_result(True)
            texts.append(waiting[0])
            return False
        if self._command is None or not any(self._caused(event) for event in events):
            return False
        sent: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        pushes = _Pushes(texts, sent, _expiring(sent, False))
        self._pushes = pushes
        try:
            return await sent
        finally:
            pushes.expiry.cancel()
            if self._pushes is pushes:
                self._pushes = None

    def _caused(self, event: Event) -> bool:
        command_id: object = getattr(event.cause, "command_id", None)
        return command_id == self._command


async def _within(waiting: asyncio.Future[T], otherwise: T) -> T:
    """``waiting``'s result, or ``otherwise`` once `HOLD_S` has passed (it is set so then:
    whoever comes later sees it done and does not hand anything over)."""
    expiry = _expiring(waiting, otherwise)
    try:
        return await waiting
    finally:
        expiry.cancel()


def _expiring(waiting: asyncio.Future[T], otherwise: T) -> asyncio.TimerHandle:
    """Set ``waiting`` to ``otherwise`` once `HOLD_S` has passed, unless it is done by then
    (or the handle returned is cancelled)."""
    return asyncio.get_running_loop().call_later(HOLD_S, _settle, waiting, otherwise)


def _settle(waiting: asyncio.Future[T], value: T) -> None:
    if not waiting.done():
        waiting.set_result(value)
