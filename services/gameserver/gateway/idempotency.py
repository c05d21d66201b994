"""Creating a game and taking a seat, safely retried after a lost answer.

A client that gets no answer (a 504, a dropped connection, a gateway restart) cannot know
whether its game was created or its seat taken. It sends an ``Idempotency-Key`` header: a
secret it generated (16 to 128 characters from ``A-Z a-z 0-9 - _ . ~``, e.g. 32 random bytes
in base64url) and sends again, unchanged, with every retry of the same request.

- ``POST /games``: the game id is derived from the key (SHA-256, first 32 hex digits), and the
  creation's command id is fixed, so a retry is the same command for the same game: the rules
  service answers it with its stored outcome, the same game. Nothing is stored for the key. A
  retry must repeat the request: a chosen seed put into the vault by the first try is kept.
- ``POST /games/{id}/seats/{n}``: the seat token is derived from the key (HMAC-free: SHA-256 of
  a label and the key, base64url), and only the token's SHA-256 is stored, as for any seat. A
  retry recomputes the token, finds its own claim and resends the same ``JoinGame`` (same
  command id, kept with the claim), so it gets the same seat and the same token back. Someone
  else cannot fetch the token: it exists nowhere but in the answer and in the key's owner's
  hands, and the key cannot be recovered from a game id or from anything stored.

A claim whose ``JoinGame`` never landed (the gateway died, the command was lost) no longer
holds the seat forever: a later claimant of a seat that the game shows free, claimed more than
`CLAIM_GRACE_S` ago, first fences the old join (records a rejection ``join_abandoned`` as the
outcome of its command id, first writer wins, so it can never be appended later) and then
releases the claim. If the old join did land meanwhile, the fence finds its accepted outcome
and the seat stays taken.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
import uuid
from typing import Final

from redis.asyncio import Redis

from eventstore import RedisEventStore
from gameserver.gateway.command_relay import accepted_or_raise
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.game_states import Played
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.seat_tokens import new_token, token_digest
from gameserver.runtime import bus
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
KEY_PATTERN: Final = re.compile(r"^[A-Za-z0-9._~-]{16,128}$")
CLAIM_GRACE_S: Final = 20.0
"""A claim this old whose join the game does not show is taken to be abandoned: twice the
gateway's default command timeout, so a join still on its way is never fenced."""

CLAIM_LUA: Final = r"""
-- KEYS[1] seats hash  seat -> token digest        KEYS[2] claims hash  seat -> "<ms>|<command id>"
-- ARGV[1] seat; ARGV[2] token digest; ARGV[3] claim ("<ms>|<command id>")
-- Returns {1, claim}: claimed now; {2, claim}: already ours (a retry); {0, claim}: another's.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  return {1, ARGV[3]}
end
local claim = redis.call('HGET', KEYS[2], ARGV[1]) or ''
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return {2, claim}
end
return {0, claim}
"""

RELEASE_LUA: Final = r"""
-- KEYS[1] seats hash; KEYS[2] claims hash; ARGV[1] seat; ARGV[2] 'digest' or 'claim';
-- ARGV[3] the value the seat's digest (or claim) must still have. Returns 1 when released.
local current
if ARGV[2] == 'digest' then
  current = redis.call('HGET', KEYS[1], ARGV[1])
else
  current = redis.call('HGET', KEYS[2], ARGV[1])
end
if current ~= ARGV[3] then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""


def check_key(key: str) -> str:
    """The key as sent, or 422 when it cannot be a secret (too short, odd characters)."""
    if not KEY_PATTERN.match(key):
        raise ApiError(
            422,
            "malformed_request",
            f"{IDEMPOTENCY_HEADER}: 16 to 128 characters from A-Z a-z 0-9 - _ . ~, a secret "
            "you generate (e.g. 32 random bytes, base64url) and send again with every retry.",
        )
    return key


def game_id_for(key: str) -> str:
    """The id of the game ``POST /games`` creates for this key (32 hex digits, like a uuid)."""
    return hashlib.sha256(b"renature/create-game\0" + check_key(key).encode()).hexdigest()[:32]


def token_for(key: str, game_id: str, seat: int) -> str:
    """The seat token a keyed join hands out: only the key's owner can compute it again."""
    label = f"renature/seat-token\0{game_id}\0{seat}\0".encode()
    digest = hashlib.sha256(label + check_key(key).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class SeatClaims:
    """Claims of seats with the command id of their join, released when abandoned."""

    def __init__(self, redis: Redis, store: RedisEventStore, grace_s: float = CLAIM_GRACE_S):
        self._redis = redis
        self._store = store
        self._grace_ms = int(grace_s * 1000)
        self._claim = redis.register_script(CLAIM_LUA)
        self._release = redis.register_script(RELEASE_LUA)

    def _keys(self, game_id: str) -> list[str]:
        layout = self._store.layout
        return [layout.seats_key(game_id), layout.game_scoped_key("claims", game_id)]

    async def claim(self, game_id: str, seat: int, token: str) -> tuple[int, str]:
        """``(status, command id)``: 1 claimed now, 2 ours already, 0 another token's."""
        fresh = f"{int(time.time() * 1000)}|join:{seat}:{uuid.uuid4().hex}"
        status, claim = await self._claim(
            keys=self._keys(game_id), args=[seat, token_digest(token), fresh]
        )
        text = claim.decode() if isinstance(claim, bytes) else str(claim)
        return int(status), text

    async def release(self, game_id: str, seat: int, token: str) -> bool:
        """Undo our own claim (never someone else's)."""
        keys = self._keys(game_id)
        return bool(await self._release(keys=keys, args=[seat, "digest", token_digest(token)]))

    async def release_abandoned(self, game_id: str, seat: int, claim: str) -> bool:
        """Fence and release a claim whose join never landed; False when it is too young or
        its join did land."""
        stamp, _, command_id = claim.partition("|")
        if not command_id or not stamp.isdigit():
            return False
        if int(time.time() * 1000) - int(stamp) < self._grace_ms:
            return False
        fence = bus.Reply(
            status="rejected",
            game_id=game_id,
            command_id=command_id,
            code="join_abandoned",
            message="This join was not completed in time and the seat was released; join again.",
        )
        previous = await self._store.record_outcome(game_id, command_id, bus.encoder.encode(fence))
        if previous is not None and bus.reply_decoder.decode(previous.outcome).status == "accepted":
            return False  # the join landed after all: the seat is taken
        released = bool(await self._release(keys=self._keys(game_id), args=[seat, "claim", claim]))
        if released:
            log.info("seat_claim_released", game_id=game_id, seat=seat)
        return released


async def join(
    gateway: Gateway,
    played: Played,
    game_id: str,
    seat: int,
    name: str,
    key: str | None,
) -> tuple[str, int, str]:
    """Claim ``seat`` and send its ``JoinGame``: ``(token, version, command id)``; 409
    ``seat_taken`` when another claimant holds it. With ``key`` a retry gets the same token."""
    claims = SeatClaims(gateway.redis, gateway.store)
    token = new_token() if key is None else token_for(key, game_id, seat)
    status, claim = await claims.claim(game_id, seat, token)
    game = played.game
    free = game.table(played.state).names[seat] is None
    if status == 0 and free and await claims.release_abandoned(game_id, seat, claim):
        status, claim = await claims.claim(game_id, seat, token)
    if status == 0 or (status == 1 and not free):
        if status == 1:
            await claims.release(game_id, seat, token)
        raise ApiError(409, "seat_taken", f"Seat {seat} is taken already.")
    _, _, command_id = claim.partition("|")
    command_id = command_id or f"join:{seat}:{uuid.uuid4().hex}"
    envelope = bus.CommandEnvelope(
        game_id, command_id, game.join_command(seat, name), seat, game.name
    )
    try:
        reply = await gateway.send(envelope)
        result = accepted_or_raise(reply, command_id)
    except ApiError as error:
        # After a timeout or an outage the join may still land: keep the claim (a retry with
        # the key finds it; without one it is released once abandoned).
        if error.status not in (503, 504):
            await claims.release(game_id, seat, token)
        raise
    return token, result.version, command_id
