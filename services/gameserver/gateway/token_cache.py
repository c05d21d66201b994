"""Seat tokens resolved in process: no Redis lookup per request.

A token never changes seat (it is handed out once, when the seat is claimed, and only its
SHA-256 is stored), so once Redis said "token T holds seat S of game G" the answer can be kept.
`CachedSeatTokens` keeps it in a bounded LRU, keyed by the token's digest, and asks Redis again
only when an entry is older than ``revalidate_s``. Tokens lapse a set time after their game
ends (`gameserver.gateway.expiry` gives the seat hash a TTL): once a game is known to
have ended (`ended`, called when the TTL is set) its tokens are looked up in Redis on every
request again, so they stop working exactly when the hash lapses. Wrong tokens are not cached
(each costs its lookup, as before).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from redis.asyncio import Redis

from eventstore import KeyLayout
from gameserver.gateway.seat_tokens import SeatTokens, token_digest

DEFAULT_ENTRIES = 100_000
DEFAULT_REVALIDATE_S = 5.0


class CachedSeatTokens(SeatTokens):
    """`SeatTokens` whose `seat_of` answers from memory while an entry is fresh."""

    def __init__(
        self,
        redis: Redis,
        layout: KeyLayout,
        *,
        max_entries: int = DEFAULT_ENTRIES,
        revalidate_s: float = DEFAULT_REVALIDATE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` tells the seconds that pass (a test's own clock)."""
        super().__init__(redis, layout)
        self._clock = clock
        self._max_entries = max_entries
        self._revalidate_s = revalidate_s
        self._seats: OrderedDict[tuple[str, str], tuple[int, float]] = OrderedDict()
        self._ended: OrderedDict[str, None] = OrderedDict()  # games whose tokens lapse
        self.lookups = 0  # Redis lookups made (for tests and the benchmark)

    async def seat_of(self, game_id: str, token: str) -> int | None:
        key = (game_id, token_digest(token))
        if game_id in self._ended:
            self.lookups += 1
            return await super().seat_of(game_id, token)
        found = self._seats.get(key)
        now = self._clock()
        if found is not None and now - found[1] < self._revalidate_s:
            self._seats.move_to_end(key)
            return found[0]
        self.lookups += 1
        seat = await super().seat_of(game_id, token)
        if seat is None:
            self._seats.pop(key, None)
            return None
        self._seats[key] = (seat, now)
        self._seats.move_to_end(key)
        while len(self._seats) > self._max_entries:
            self._seats.popitem(last=False)
        return seat

    async def release(self, game_id: str, seat: int, token: str) -> None:
        self._seats.pop((game_id, token_digest(token)), None)
        await super().release(game_id, seat, token)

    async def free(self, game_id: str, seat: int) -> None:
        """`SeatTokens.free`; then the game's tokens are looked up in Redis on every request
        (`ended`), so the freed seat's token is answered by no cache."""
        await super().free(game_id, seat)
        self.ended(game_id)

    def revoke(self, game_id: str, digest: str) -> None:
        """The token with this digest no longer holds its seat (reclaimed): forget it now."""
        self._seats.pop((game_id, digest), None)

    def ended(self, game_id: str) -> None:
        """The game's tokens now lapse with its seat hash: stop answering them from memory."""
        for key in [key for key in self._seats if key[0] == game_id]:
            del self._seats[key]
        self._ended[game_id] = None
        while len(self._ended) > self._max_entries:
            self._ended.popitem(last=False)
