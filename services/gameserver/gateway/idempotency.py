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

A key stands for one request (IETF Idempotency-Key draft): the gateway keeps a fingerprint of
the body it was first sent with (an HMAC of the body under the key: it reveals nothing of the
body without the key), with the claim of a seat and in the lobby's record of a created game. A
retry with the same key and another body is refused, 422 ``idempotency_key_reused``, and
changes nothing; a retry while the first request with the key is still being answered gets 409
``idempotency_key_in_flight`` (a lease per key, `IN_FLIGHT_MARGIN_S` past the command timeout,
so a gateway that died mid-request blocks its retries no longer than that). A claim is released
only by the request that made it, and only when its own join was refused: a retry never undoes
the seat that the first request took.

A claim whose ``JoinGame`` never landed (the gateway died, the command was lost) no longer
holds the seat forever: a later claimant of a seat that the game shows free, claimed more than
`CLAIM_GRACE_S` ago, first has the old join fenced and then releases the claim. The gateway
cannot write outcomes (its Redis user may not): it sends a `bus.WithdrawJoin` for the old
join's command id, behind the join on the game's command stream, and the rules service records
the rejection ``join_abandoned`` as that command id's outcome (first writer wins), so the join
can never be appended later (`gameserver.rules.withdrawals`). If the old join landed (or was
still queued and lands first), the answer is its accepted outcome and the seat stays taken.

This module keeps the keys, the fingerprints and the records in Redis (`RedisKeyLeases`,
`SeatClaims`); the steps of a creation and a join are the use cases'
(``gateway.use_cases.game_creation``, ``gateway.use_cases.seat_taking``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from pydantic import BaseModel
from redis import exceptions as redis_errors
from redis.asyncio import Redis

from eventstore import KeyLayout, RedisEventStore
from gameserver.gateway.command_relay import raise_refusal
from gameserver.gateway.seat_tokens import token_digest
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.runtime import bus
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
KEY_PATTERN: Final = re.compile(r"^[A-Za-z0-9._~-]{16,128}$")
CLAIM_GRACE_S: Final = 20.0
"""A claim this old whose join the game does not show is taken to be abandoned: twice the
gateway's default command timeout, so a join still on its way is never fenced."""

ABANDONED: Final = "join_abandoned"
"""The rules service's answer to a withdrawal once the withdrawn join can never land."""

IN_FLIGHT_MARGIN_S: Final = 2.0
"""A keyed request's lease outlives the command timeout by this much (then it lapses)."""

CLAIM_LUA: Final = r"""
-- KEYS[1] seats hash  seat -> token digest
-- KEYS[2] claims hash  seat -> "<ms>|<command id>|<fingerprint of the request>"
-- ARGV[1] seat; ARGV[2] token digest; ARGV[3] claim ("<ms>|<command id>|<fingerprint>")
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

LEASE_TAKE_LUA: Final = r"""
-- KEYS[1] a lease; ARGV[1] its would-be owner; ARGV[2] its time to live (ms).
-- Returns 1 when it is that owner's (taken now, or by this very call sent before: a client
-- that resent it after a lost connection), 0 when it is another's.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0
"""

LEASE_RELEASE_LUA: Final = r"""
-- KEYS[1] a lease; ARGV[1] its owner. Deleted only while it is still that owner's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
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
    """The key as sent, or ``invalid`` (422) when it cannot be a secret (too short, odd
    characters)."""
    if not KEY_PATTERN.match(key):
        raise Refusal(
            "invalid",
            "malformed_request",
            f"{IDEMPOTENCY_HEADER}: 16 to 128 characters from A-Z a-z 0-9 - _ . ~, a secret "
            "you generate (e.g. 32 random bytes, base64url) and send again with every retry.",
        )
    return key


def game_id_for(key: str) -> str:
    """The id of the game ``POST /games`` creates for this key (32 hex digits, like a uuid)."""
    return hashlib.sha256(b"renature/create-game\0" + check_key(key).encode()).hexdigest()[:32]


def fingerprint(key: str, body: BaseModel | bytes) -> str:
    """The request's fingerprint: an HMAC of its body (as validated, defaults filled in) under
    the key, so that the same body always gives the same one and a stored one tells nothing
    of the body (a chosen seed, an invitation code) to whoever lacks the key."""
    text = body if isinstance(body, bytes) else body.model_dump_json().encode()
    return hmac.new(key.encode(), text, hashlib.sha256).hexdigest()[:32]


def key_reused() -> Refusal:
    """``invalid`` (422) ``idempotency_key_reused``: the key's first request had another
    body."""
    return Refusal(
        "invalid",
        "idempotency_key_reused",
        f"This {IDEMPOTENCY_HEADER} was first sent with another request body; a retry must "
        "repeat its request unchanged (a new request takes a new key). Nothing was changed.",
    )


class RedisKeyLeases:
    """The leases of idempotency keys in Redis: one per key and request scope, in the game's
    hash slot, lapsing `IN_FLIGHT_MARGIN_S` after the command timeout."""

    def __init__(self, redis: Redis, layout: KeyLayout, command_timeout: float) -> None:
        self._layout = layout
        self._ttl_ms = int((command_timeout + IN_FLIGHT_MARGIN_S) * 1000)
        # By their digests (EVALSHA, loaded again where Redis lost them): an EVAL sends the
        # script's text and has Redis hash it on every call, 47 us of Redis's CPU each, six
        # a game's set-up in `make bench` (`--only setup`).
        self._take = redis.register_script(LEASE_TAKE_LUA)
        self._release = redis.register_script(LEASE_RELEASE_LUA)

    @contextlib.asynccontextmanager
    async def hold(self, game_id: str, scope: str) -> AsyncIterator[None]:
        """Hold the key's lease while its request is answered: ``conflict`` (409)
        ``idempotency_key_in_flight`` when another request with the key holds it."""
        lease = self._layout.game_scoped_key(f"inflight:{scope}", game_id)
        owner = uuid.uuid4().hex
        # Not a plain SET NX: the client sends a command again when its connection failed
        # before the answer came, and a SET NX that had landed would then find the lease taken
        # by its own request (409 to itself, the key blocked until the lease lapsed).
        if not await self._take(keys=[lease], args=[owner, self._ttl_ms]):
            raise Refusal(
                "conflict",
                "idempotency_key_in_flight",
                f"A request with this {IDEMPOTENCY_HEADER} is still being answered; retry it "
                "once that one is (or in a few seconds).",
            )
        try:
            yield
        finally:
            with contextlib.suppress(redis_errors.RedisError, OSError):  # else it lapses
                await self._release(keys=[lease], args=[owner])


def token_for(key: str, game_id: str, seat: int) -> str:
    """The seat token a keyed join hands out: only the key's owner can compute it again."""
    label = f"renature/seat-token\0{game_id}\0{seat}\0".encode()
    digest = hashlib.sha256(label + check_key(key).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class SeatClaims:
    """Claims of seats with the command id of their join, released when abandoned."""

    def __init__(
        self,
        redis: Redis,
        store: RedisEventStore,
        grace_s: float = CLAIM_GRACE_S,
        *,
        send: Callable[[bus.CommandEnvelope], Awaitable[bus.Reply]] | None = None,
    ):
        """``send`` hands a withdrawal to the rules service (`Gateway.send`); without it no
        abandoned claim is released."""
        self._redis = redis
        self._store = store
        self._send = send
        self._grace_ms = int(grace_s * 1000)
        self._claim = redis.register_script(CLAIM_LUA)
        self._release = redis.register_script(RELEASE_LUA)

    def _keys(self, game_id: str) -> list[str]:
        layout = self._store.layout
        return [layout.seats_key(game_id), layout.game_scoped_key("claims", game_id)]

    async def claim(
        self, game_id: str, seat: int, token: str, request: str = ""
    ) -> tuple[int, str]:
        """``(status, claim)``: 1 claimed now, 2 ours already, 0 another token's; the claim is
        ``<ms>|<command id>|<request fingerprint>`` (`parse_claim`)."""
        fresh = f"{int(time.time() * 1000)}|{bus.join_command_id(seat, uuid.uuid4().hex)}|{request}"
        status, claim = await self._claim(
            keys=self._keys(game_id), args=[seat, token_digest(token), fresh]
        )
        text = claim.decode() if isinstance(claim, bytes) else str(claim)
        return int(status), text

    async def release(self, game_id: str, seat: int, token: str) -> bool:
        """Undo our own claim (never someone else's)."""
        keys = self._keys(game_id)
        return bool(await self._release(keys=keys, args=[seat, "digest", token_digest(token)]))

    async def release_abandoned(self, game_id: str, seat: int, claim: str, game: str) -> bool:
        """Have the rules service fence a claim's join that never landed, then release the
        claim; False when it is too young or its join did land (504 when the rules service
        does not answer: the claim is kept)."""
        stamp, command_id, _ = parse_claim(claim)
        if not command_id or not stamp.isdigit() or self._send is None:
            return False
        if int(time.time() * 1000) - int(stamp) < self._grace_ms:
            return False
        reply = await self._send(bus.withdrawal(game_id, command_id, seat, game))
        if reply.code in ("store_unavailable", "internal_error"):
            raise_refusal(reply)  # 503 / 500: the claim is kept
        if (reply.status, reply.code) != ("rejected", ABANDONED):
            return False  # the join landed after all (the seat is taken), or no such join
        released = bool(await self._release(keys=self._keys(game_id), args=[seat, "claim", claim]))
        if released:
            log.info("seat_claim_released", game_id=game_id, seat=seat)
        return released


def parse_claim(claim: str) -> tuple[str, str, str]:
    """``(ms, command id, request fingerprint)`` of a claim (the fingerprint is blank for a
    claim without a key, or one stored before fingerprints were)."""
    stamp, _, rest = claim.partition("|")
    command_id, _, request = rest.partition("|")
    return stamp, command_id, request
