"""Spectators' live frames share a budget a second per gateway worker; seats' never wait.

A spectator's live channel on a finished game sends the whole game (a frame per event, a few
hundred) and closes; opened again and again from many addresses, within every per-address
limit, such channels took the gateway's event loop from the players (the flood bench's
``spectators``: a normal player's p99 many times its idle figure). `FrameBudget` is a
generic cell rate limiter (a token bucket without tokens: one "theoretical arrival time") over
every spectator frame of a worker, WebSocket and server-sent events alike: up to ``rate``
frames a second, bursts of ``burst_s`` seconds' worth sent at once, and a frame past it
waits its turn (nothing is refused or dropped: a spectator's history only arrives more
slowly). Seats' channels are not paced at all. ``RENATURE_LIMIT_SPECTATOR_FRAMES`` (a float,
frames a second per worker; `gateway.ratelimit.RateLimits`) sets the rate when the rate limits
are on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

BURST_S = 0.25
"""Seconds' worth of frames sent without waiting after a quiet spell."""


class FrameBudget:
    """At most ``rate`` frames a second over every caller of `take`, in the order they ask."""

    def __init__(
        self, rate: float, burst_s: float = BURST_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0:
            raise ValueError(f"a frame budget needs a positive rate, not {rate}")
        self.interval = 1.0 / rate
        self.burst_s = burst_s
        self._clock = clock
        self._arrival = clock()
        self.waited = 0
        """Frames that had to wait their turn (tests and the flood bench)."""

    def delay(self) -> float:
        """Book the next frame's turn: the seconds to wait for it (0: at once)."""
        now = self._clock()
        arrival = max(self._arrival, now)
        self._arrival = arrival + self.interval
        return max(0.0, arrival - now - self.burst_s)

    async def take(self) -> None:
        """Wait for this frame's turn."""
        wait = self.delay()
        if wait > 0:
            self.waited += 1
            await asyncio.sleep(wait)


async def pace(budget: FrameBudget | None, viewer: int | None) -> None:
    """A live frame's turn: a spectator's (``viewer`` None) waits for ``budget``, a seat's
    goes at once, and so does everyone's where no budget is set (rate limits off)."""
    if viewer is None and budget is not None:
        await budget.take()
