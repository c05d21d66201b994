"""The seed vault: each game's secret seed and the salt of its commitment.

The rules service generates a game's seed and salt when it creates the game (256 random bits
each) and reads them back once, to issue ``FinishGame`` after the last domino; ``GameCreated``
publishes only ``hmac-sha256:HMAC(salt, seed)`` and ``GameEnded`` reveals both. A chosen seed
(tests, bots, tournaments) is put into the vault by the gateway before the creation, with a
fresh salt of its own and ``chosen`` set, so even a tiny chosen seed cannot be brute-forced
from its commitment, and the game records that its seed was chosen.

One Redis string per game, ``<prefix>:{pNN}:seed:<game_id>`` (the game's hash slot), holding
the msgspec JSON of `SeedSecret`. A value written before salts existed (the bare seed) reads as
an unsalted, secret seed. The ACL (infra/redis/users.acl) lets only the rules service read and
write these keys (and the retention service delete them with their game). The gateway cannot
touch them: it stages a chosen seed in ``<prefix>:{pNN}:chosen:<game_id>`` (write only, with
SET NX and a ten-minute expiry), which the rules service reads once, when it creates the game,
into the vault; a staged seed of a game that exists already is never read again.
"""

from __future__ import annotations

import secrets
from typing import Protocol

import msgspec
from redis.asyncio import Redis

from eventstore import KeyLayout

STAGED_SEED_TTL_S = 600
"""How long a staged chosen seed waits for its game's creation (sent right after it)."""


class SeedSecret(msgspec.Struct, frozen=True):
    """What the vault keeps for a game."""

    seed: str
    salt: str = ""
    chosen: bool = False


def new_secret(seed: str | None = None) -> SeedSecret:
    """A fresh salt with ``seed`` (a chosen seed) or with a fresh random seed."""
    salt = secrets.token_hex(32)
    if seed is None:
        return SeedSecret(seed=secrets.token_hex(32), salt=salt)
    return SeedSecret(seed=seed, salt=salt, chosen=True)


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(SeedSecret)


def encode(secret: SeedSecret) -> bytes:
    return _encoder.encode(secret)


def decode(value: bytes | str) -> SeedSecret:
    """The stored secret; a bare seed (written before salts) is an unsalted secret seed."""
    raw = value.encode() if isinstance(value, str) else value
    if raw.startswith(b"{"):
        try:
            return _decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    return SeedSecret(seed=raw.decode())


def as_secret(value: SeedSecret | str) -> SeedSecret:
    """A vault may hand back a bare seed (an unsalted one, as a test vault does)."""
    return value if isinstance(value, SeedSecret) else SeedSecret(seed=value)


class SeedVault(Protocol):
    """Where the secret seeds live (a Redis key per game in production, a dict in unit tests)."""

    async def create(self, game_id: str) -> SeedSecret | str: ...

    async def get(self, game_id: str) -> SeedSecret | str | None: ...


class RedisSeedVault:
    """Seeds in ``<prefix>:{pNN}:seed:<game_id>``, in the hash slot of the game's other keys."""

    def __init__(self, redis: Redis, layout: KeyLayout) -> None:
        self._redis = redis
        self._layout = layout

    def key(self, game_id: str) -> str:
        """The seed key of a game."""
        return self._layout.seed_key(game_id)

    async def create(self, game_id: str) -> SeedSecret:
        """The game's secret, generated now unless one exists (SET NX GET: first writer wins).

        Two instances creating the same game at once both end up with the stored secret, so
        the commitment in whichever ``GameCreated`` wins always matches what is kept here; a
        secret the gateway put first (a chosen seed) is used as it is.
        """
        staged = await self._redis.get(self._layout.chosen_seed_key(game_id))
        fresh = new_secret() if staged is None else decode(staged)
        previous = await self._redis.set(self.key(game_id), encode(fresh), nx=True, get=True)
        return fresh if not isinstance(previous, bytes | str) else decode(previous)

    async def get(self, game_id: str) -> SeedSecret | None:
        value = await self._redis.get(self.key(game_id))
        return None if value is None else decode(value)

    async def choose(self, game_id: str, seed: str) -> bool:
        """Stage a caller's ``seed`` (with a fresh salt) for the not yet created ``game_id``;
        False if one is staged already. Writes only (SET NX, expiring): the gateway never
        reads, overwrites or deletes a seed."""
        key, value = self._layout.chosen_seed_key(game_id), encode(new_secret(seed))
        return bool(await self._redis.set(key, value, nx=True, ex=STAGED_SEED_TTL_S))
