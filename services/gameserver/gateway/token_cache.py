"""Seat tokens resolved in process: no Redis lookup per request.

A token never changes seat (it is handed out once, when the seat is claimed, and only its
SHA-256 is stored), so once Redis said "token T holds seat S of game G" the answer can be kept.
`CachedSeatTokens` keeps it in a bounded LRU, keyed by the token's digest, and asks Redis again
only when an entry is older than ``revalidate_s``; that read holds every seat of the game, so
it answers for the game's other tokens too (one lookup per game, not per seat, every
``revalidate_s``: the lookups were a tenth of the gateway's CPU at 256 games; and a game's
set-up costs one, not one per seat). Tokens lapse
a set time after their game ends (`gameserver.gateway.expiry` gives the seat hash a TTL):
once a game is known to have ended (`ended`, called when the TTL is set) its tokens are
looked up in Redis on every request again, so they stop working exactly when the hash lapses.
Wrong tokens are not cached (each costs its lookup, as before).

`holder_of` answers a narrower question, which rate-limit bucket a request counts in, from a
snapshot of each game's seat hash read at most every ``snapshot_s``: a flood of made-up tokens
then costs no Redis round trip each (the routes still check every token with `seat_of`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from redis.asyncio import Redis

from eventstore import KeyLayout
from gameserver.gateway.seat_tokens import SeatTokens, seat_holding, token_digest

DEFAULT_ENTRIES = 100_000
DEFAULT_REVALIDATE_S = 5.0
DEFAULT_SNAPSHOT_S = 0.1
"""How old a game's seat-hash snapshot may be for `holder_of`: a seat claimed through another
instance counts in its own bucket at most this long after the claim."""


class CachedSeatTokens(SeatTokens):
    """`SeatTokens` whose `seat_of` answers from memory while an entry is fresh."""

    def __init__(
        self,
        redis: Redis,
        layout: KeyLayout,
        *,
        max_entries: int = DEFAULT_ENTRIES,
        revalidate_s: float = DEFAULT_REVALIDATE_S,
        snapshot_s: float = DEFAULT_SNAPSHOT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` tells the seconds that pass (a test's own clock)."""
        super().__init__(redis, layout)
        self._clock = clock
        self._max_entries = max_entries
        self._revalidate_s = revalidate_s
        self._seats: OrderedDict[tuple[str, str], tuple[int, float]] = OrderedDict()
        self._ended: OrderedDict[str, None] = OrderedDict()  # games whose tokens lapse
        self._snapshot_s = snapshot_s
        self._claims: OrderedDict[str, tuple[dict[str, int], float]] = OrderedDict()
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
        claims = await self.claims(game_id)
        self._refresh(game_id, claims, now)
        seat = seat_holding(claims, key[1])
        if seat is None:
            self._seats.pop(key, None)
        return seat

    def _refresh(self, game_id: str, claims: dict[str, int], now: float) -> None:
        """Every token of the game was just read from Redis (one read holds every seat of the
        game): each is answered from memory for ``revalidate_s`` from now, whichever seat
        asked, so a game's tokens cost one lookup per ``revalidate_s`` between them, and a
        seat that no request of this worker has shown yet (the other seats at the start, their
        sockets, a seat claimed through another worker) costs none of its own."""
        for digest, seat in claims.items():
            key = (game_id, digest)
            self._seats[key] = (seat, now)
            self._seats.move_to_end(key)
        while len(self._seats) > self._max_entries:
            self._seats.popitem(last=False)

    async def holder_of(self, game_id: str, token: str) -> int | None:
        """The seat ``token`` holds in ``game_id`` as far as the rate limits go (which bucket a
        request counts in): a token this instance resolved within ``revalidate_s`` keeps its
        seat; any other is looked up in a snapshot of the game's seat hash at most
        ``snapshot_s`` old, so made-up tokens cost one Redis read per game per ``snapshot_s``
        however many arrive. (The digest is looked up in a dict, not compared in constant time:
        its timing tells the sender nothing of a stored digest that it could steer without a
        SHA-256 preimage.)"""
        digest = token_digest(token)
        known = self._seats.get((game_id, digest))
        now = self._clock()
        if known is not None and now - known[1] < self._revalidate_s:
            return known[0]
        snapshot = self._claims.get(game_id)
        if snapshot is None or now - snapshot[1] >= self._snapshot_s:
            snapshot = (await self.claims(game_id), now)
            self.lookups += 1
            self._claims[game_id] = snapshot
            self._claims.move_to_end(game_id)
            while len(self._claims) > self._max_entries:
                self._claims.popitem(last=False)
        return snapshot[0].get(digest)

    async def claim(self, game_id: str, seat: int, token: str) -> bool:
        claimed = await super().claim(game_id, seat, token)
        self._claims.pop(game_id, None)  # this instance sees its own claims at once
        return claimed

    async def release(self, game_id: str, seat: int, token: str) -> None:
        self._claims.pop(game_id, None)
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
        self._claims.pop(game_id, None)

    def ended(self, game_id: str) -> None:
        """The game's tokens now lapse with its seat hash: stop answering them from memory."""
        for key in [key for key in self._seats if key[0] == game_id]:
            del self._seats[key]
        self._claims.pop(game_id, None)
        self._ended[game_id] = None
        while len(self._ended) > self._max_entries:
            self._ended.popitem(last=False)
