"""Seat tokens stop working a set time after their game ends.

The first time the gateway sees a seated request for a finished game, it gives the game's seat
hash (``<prefix>:{pNN}:seats:<game_id>``, the digests of its tokens) a TTL of
``after_end_s`` seconds; once it lapses every token of the game is refused (403
``invalid_token``) and the hash is gone from Redis. Until then a player can still read the
final view of their seat. Every instance sets the TTL only if none is set (``EXPIRE NX``), so
the first one to notice the end fixes the moment.

The check reads the game's last event alone (`GameStates.is_over`: a game's ending event is its
last). Folding the game's new events instead, once a second per game, was about an eighth of
the gateway's CPU per move over HTTP at 256 games in `make bench`. A game seen running is not
looked at again for ``recheck_s`` (five seconds): even that short read would otherwise be paid
by a seated player's every request. The tokens of a game then lapse at most that much later
than ``after_end_s`` after its end, as a gateway's token cache trusts a token it resolved
lately for as long (`token_cache.DEFAULT_REVALIDATE_S`).

A game seen ended is looked at again after ``confirm_s`` (a minute): a crash that cost Redis
its last writes (``everysec``) may have taken the end back, and the TTL with it; the game then
ends again later, and its tokens must lapse after that end too (``NX`` keeps a TTL that
stands).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from redis.asyncio import Redis

from gameserver.gateway.game_states import GameStates
from gameserver.gateway.seat_tokens import SeatTokens
from gameserver.gateway.token_cache import CachedSeatTokens

DEFAULT_AFTER_END_S = 3600
REMEMBERED = 4096
RECHECK_S = 5.0
CONFIRM_S = 60.0


class TokenExpiry:
    """Puts the TTL on the seat hash of each finished game once (per process)."""

    def __init__(
        self,
        redis: Redis,
        tokens: SeatTokens,
        after_end_s: int,
        recheck_s: float = RECHECK_S,
        *,
        confirm_s: float = CONFIRM_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` tells the seconds that pass (a test's own clock)."""
        self._redis = redis
        self._clock = clock
        self._tokens = tokens
        self.after_end_s = after_end_s
        self.recheck_s = recheck_s
        self.confirm_s = confirm_s
        self._done: OrderedDict[str, float] = OrderedDict()
        """Games seen ended, with when to look again (`confirm_s`)."""
        self._running: OrderedDict[str, float] = OrderedDict()
        """Games seen running, with when to look again."""

    async def check(self, games: GameStates, game_id: str) -> None:
        """If the game has ended, make sure its tokens lapse ``after_end_s`` from now on."""
        now = self._clock()
        if self._done.get(game_id, 0.0) > now or self._running.get(game_id, 0.0) > now:
            return
        try:
            over = await games.is_over(game_id)
        except Exception:  # an unknown game or a corrupted stream: the route answers that
            return
        if not over:
            self._done.pop(game_id, None)
            self._running[game_id] = now + self.recheck_s
            self._running.move_to_end(game_id)
            while len(self._running) > REMEMBERED:
                self._running.popitem(last=False)
            return
        self._running.pop(game_id, None)
        await self._redis.expire(self._tokens.key(game_id), self.after_end_s, nx=True)
        if isinstance(self._tokens, CachedSeatTokens):  # its tokens now lapse: ask Redis
            self._tokens.ended(game_id)
        self._done[game_id] = now + self.confirm_s
        self._done.move_to_end(game_id)
        while len(self._done) > REMEMBERED:
            self._done.popitem(last=False)
