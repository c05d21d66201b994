"""Rate-limit units leased from Redis and spent in process: most requests cost no round trip.

A limit such as ``30/second`` is a sliding-window counter in Redis that every gateway worker
counts into (`gateway.ratelimit`). Counting one request at a time costs a Redis round trip (a
Lua script of about ten commands) per request, the largest part of a move's cost in Redis. A
`LeasedWindow` takes ``n`` units of a key's counter at once instead (the counter grows by
``n``, all or nothing, only while ``n`` more fit under the limit) and spends them on the
worker's next requests of that key without asking Redis; once they are spent (or after
`HOLD_S`) the next request takes a new lease. Where ``n`` units no longer fit it asks for one
alone, so a limit is still reached exactly.

The lease size is ``max(1, min(most, limit // FRACTION))``: a tenth of the limit, at most
``most`` (``RateLimits.lease``, 16 by default), and 1 for limits under 20, which are therefore
counted exactly as before (one round trip per request).

What holds, per key and per window of the limit (as the `limits` library's sliding-window
counter holds it; ``W`` workers, leases of ``n``):

- **never more than the limit plus ``W * (n - 1)``** requests admitted. Every unit spent was
  counted in Redis when its lease was taken; a lease's first unit is spent at once, and a
  worker holds at most one lease of a key at a time (requests that find one being taken wait
  for it), so what is spent in a window beyond what the window counted is at most the ``n - 1``
  units each worker still held when the window began;
- a worker that sees all of a key's requests (one worker, or a client that stays on one
  keep-alive connection) admits exactly the limit: it spends its lease before it asks again;
- units a worker took but has not spent still count in Redis, so other workers may refuse that
  key up to ``(W - 1) * (n - 1)`` requests early; leases are never given back (an unspent unit
  errs towards refusing, never towards admitting) and lapse from the counter with its window.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from limits import RateLimitItem
from limits.aio.strategies import SlidingWindowCounterRateLimiter

FRACTION = 10
"""A lease is at most this share of its limit (a tenth)."""
HOLD_S = 60.0
"""A lease not spent after this long is dropped (its units were counted: nothing is lost but
memory)."""
MAX_LEASES = 100_000
"""Leases kept at most per worker; past that the lapsed ones are dropped, then the oldest."""


@dataclass(slots=True)
class Lease:
    units: int
    """Units taken from Redis and not spent yet."""
    until: float


class LeasedWindow:
    """Hits of a sliding-window limiter counted in leases of several units (module text)."""

    def __init__(
        self,
        window: SlidingWindowCounterRateLimiter,
        most: int,
        *,
        hold_s: float = HOLD_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``most``: the largest lease (1 counts every request in Redis, as without leases)."""
        self.window = window
        self.most = max(1, most)
        self.hold_s = hold_s
        self._clock = clock
        self._leases: dict[str, Lease] = {}
        self._taking: dict[str, asyncio.Future[None]] = {}
        self.round_trips = 0
        """Leases asked of Redis (for tests and the benchmark)."""

    def size(self, item: RateLimitItem) -> int:
        """Units a lease of ``item`` takes at once."""
        return max(1, min(self.most, item.amount // FRACTION))

    async def hit(self, item: RateLimitItem, *identity: str) -> bool:
        """Count one request; False when it passes the limit (nothing is counted then)."""
        size = self.size(item)
        if size == 1:
            self.round_trips += 1
            return await self.window.hit(item, *identity)
        key = item.key_for(*identity)
        while True:
            lease = self._leases.get(key)
            if lease is not None and lease.units > 0 and lease.until > self._clock():
                lease.units -= 1
                return True
            taking = self._taking.get(key)
            if taking is None:
                break
            await asyncio.shield(taking)  # another request takes the lease: then look again
        return await self._take(key, size, item, identity)

    async def _take(
        self, key: str, size: int, item: RateLimitItem, identity: tuple[str, ...]
    ) -> bool:
        """A new lease of ``size`` units (or of one, where ``size`` no longer fit), its first
        unit spent on this request."""
        taken = asyncio.get_running_loop().create_future()
        self._taking[key] = taken
        try:
            self.round_trips += 1
            units = size if await self.window.hit(item, *identity, cost=size) else 0
            if units == 0:
                self.round_trips += 1
                units = 1 if await self.window.hit(item, *identity) else 0
            if units == 0:
                self._leases.pop(key, None)
                return False
            self._keep(key, Lease(units - 1, self._clock() + self.hold_s))
            return True
        finally:
            del self._taking[key]
            taken.set_result(None)

    def _keep(self, key: str, lease: Lease) -> None:
        self._leases.pop(key, None)
        self._leases[key] = lease  # the newest last: the oldest go first when full
        if len(self._leases) > MAX_LEASES:
            now = self._clock()
            self._leases = {k: v for k, v in self._leases.items() if v.until > now}
            while len(self._leases) > MAX_LEASES:
                del self._leases[next(iter(self._leases))]
