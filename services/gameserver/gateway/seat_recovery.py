"""Seats that follow their player to another device: a personal recovery secret, a bound user.

A seat token lives in one browser. So that a player who loses it (another device, cleared
storage) does not lose the seat, a join hands out, beside the token, a **recovery secret**
shown once (a frontend shows it as a copyable link); when the deployment has an identity
provider (`gameserver.gateway.identity`) and the join carried the user's signed token, the seat
is also **bound** to that user. ``POST /games/{id}/seats/{n}/reclaim`` with the secret, or with
a fresh token of the bound user, hands the seat a new seat token: the old token stops working
(at once on the gateway worker that answered; other workers ask Redis again within their token
cache's ``revalidate_s``, 5 s) and a new recovery secret replaces the used one, so a recovery
link restores a seat once.

Only digests are kept, in the game's ``claims`` hash (its hash slot, removed with the game by
retention): ``recovery:<seat>`` the SHA-256 of the secret, ``identity:<seat>`` the digest of the
user's issuer and subject. The hand-over is one script: the proof is checked and the seat's
token digest and recovery digest replaced together, so two reclaims with one secret cannot
both win.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Final

from redis.asyncio import Redis

from eventstore import KeyLayout
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.seat_tokens import new_token, token_digest

REHAND_LUA: Final = r"""
-- KEYS[1] seats hash (seat -> token digest); KEYS[2] claims hash
-- ARGV[1] seat; ARGV[2] the proof's field ('recovery:<seat>' or 'identity:<seat>');
-- ARGV[3] the proof's digest; ARGV[4] the new token's digest; ARGV[5] the new recovery digest
-- Returns the old token digest when the seat was handed over, '' when the proof is wrong.
local proof = redis.call('HGET', KEYS[2], ARGV[2])
if not proof or proof ~= ARGV[3] then
  return ''
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then
  return ''
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], 'recovery:' .. ARGV[1], ARGV[5])
return old
"""


def recovery_for(key: str, game_id: str, seat: int) -> str:
    """The recovery secret a keyed join hands out (a retry gets the same one back)."""
    label = f"renature/seat-recovery\0{game_id}\0{seat}\0".encode()
    digest = hashlib.sha256(label + key.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class SeatRecovery:
    """The recovery and identity digests of a game's seats, and the hand-over to a new token."""

    def __init__(self, redis: Redis, layout: KeyLayout) -> None:
        self._redis = redis
        self._layout = layout
        self._rehand = redis.register_script(REHAND_LUA)

    def _keys(self, game_id: str) -> list[str]:
        return [self._layout.seats_key(game_id), self._layout.game_scoped_key("claims", game_id)]

    async def bind(self, game_id: str, seat: int, recovery: str, user: str | None) -> None:
        """Record the seat's recovery secret (its digest) and, when given, its bound user."""
        items = [f"recovery:{seat}", token_digest(recovery)]
        if user is not None:
            items += [f"identity:{seat}", user]
        await self._redis.hset(self._keys(game_id)[1], items=items)

    async def reclaim(
        self, game_id: str, seat: int, *, recovery: str | None = None, user: str | None = None
    ) -> tuple[str, str, str]:
        """Hand the seat to a new token on a proof (the recovery secret or the bound user):
        ``(new token, new recovery secret, old token digest)``; 403 ``not_your_seat`` when the
        proof is not the seat's."""
        if recovery is not None:
            field, proof = f"recovery:{seat}", token_digest(recovery)
        else:
            field, proof = f"identity:{seat}", user or ""
        token, fresh_recovery = new_token(), new_token()
        old = await self._rehand(
            keys=self._keys(game_id),
            args=[seat, field, proof, token_digest(token), token_digest(fresh_recovery)],
        )
        old_digest = old.decode() if isinstance(old, bytes) else str(old or "")
        if not old_digest:
            raise ApiError(
                403,
                "not_your_seat",
                f"This proves no claim to seat {seat} of this game (a recovery link works "
                "once; a bound seat takes its own user's token).",
            )
        return token, fresh_recovery, old_digest

    async def forget(self, game_id: str, seat: int) -> None:
        """The seat was freed: its recovery secret and bound user go with it."""
        await self._redis.hdel(self._keys(game_id)[1], f"recovery:{seat}", f"identity:{seat}")
