"""Seat tokens: the bearer secrets that let a client act for one seat of one game.

A token is handed out once, when the seat is claimed, and only its SHA-256 is kept, so a copy
of Redis does not let anyone act for a seat. The hash lives in ``<prefix>:{pNN}:seats:<game>``,
next to the game's stream in the same hash slot (the store's key layout), so a game's keys stay
together on a Redis Cluster.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from redis.asyncio import Redis

from eventstore import KeyLayout
from eventstore.redis_values import text


def new_token() -> str:
    """A fresh, unguessable seat token (256 bits)."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What is stored instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def seat_holding(claims: dict[str, int], digest: str) -> int | None:
    """The seat of the token whose digest is ``digest`` among ``claims`` (`SeatTokens.claims`),
    or None; every stored digest compared in constant time."""
    found = None
    for stored, seat in claims.items():
        if hmac.compare_digest(stored, digest):
            found = seat
    return found


class SeatTokens:
    """Claims seats and resolves tokens back to seats, per game."""

    def __init__(self, redis: Redis, layout: KeyLayout) -> None:
        self._redis = redis
        self._layout = layout

    def key(self, game_id: str) -> str:
        """The hash ``seat number -> token digest`` of a game."""
        return self._layout.seats_key(game_id)

    def marker_key(self, game_id: str) -> str:
        """The hash of facts the gateway records about a game it created (e.g. seed origin)."""
        return self._layout.created_key(game_id)

    async def claim(self, game_id: str, seat: int, token: str) -> bool:
        """Reserve ``seat`` for ``token``; False if someone holds it already (HSETNX: exactly
        one claim wins a race)."""
        return bool(await self._redis.hsetnx(self.key(game_id), str(seat), token_digest(token)))

    async def release(self, game_id: str, seat: int, token: str) -> None:
        """Undo our own claim (the rules service refused the join); never someone else's."""
        key = self.key(game_id)
        stored = await self._redis.hget(key, str(seat))
        if stored is not None and hmac.compare_digest(text(stored), token_digest(token)):
            await self._redis.hdel(key, str(seat))

    async def free(self, game_id: str, seat: int) -> None:
        """The seat was left or its player removed: its token's digest goes, and with it the
        seat's claim, recovery code and bound user (the game's ``claims`` hash)."""
        claims = self._layout.game_scoped_key("claims", game_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hdel(self.key(game_id), str(seat))
        pipe.hdel(claims, str(seat), f"recovery:{seat}", f"identity:{seat}")
        await pipe.execute()

    async def seat_of(self, game_id: str, token: str) -> int | None:
        """The seat ``token`` belongs to in this game, or None."""
        return seat_holding(await self.claims(game_id), token_digest(token))

    async def claims(self, game_id: str) -> dict[str, int]:
        """The game's claimed seats as stored: each token digest with its seat."""
        claims = await self._redis.hgetall(self.key(game_id))
        return {text(digest): int(text(seat)) for seat, digest in claims.items()}

    async def mark_created(self, game_id: str, *, chosen_seed: bool, public: bool = False) -> None:
        """Record whether the game was dealt from a caller-chosen seed (tests, bots), or is of
        a game whose seed deals nothing hidden (``public``: Renaissance)."""
        origin = "public" if public else "chosen" if chosen_seed else "secret"
        await self._redis.hset(self.marker_key(game_id), mapping={"seed": origin})

    async def seed_origin(self, game_id: str) -> str | None:
        """``chosen``, ``secret``, ``public`` or None when the game was not created through a
        gateway."""
        value = await self._redis.hget(self.marker_key(game_id), "seed")
        return None if value is None else text(value)
