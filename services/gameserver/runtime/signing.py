"""Signed game records: a file that proves, offline, that it came from the server unmodified.

The hash chain of a game's events shows that no event was changed *unless* the whole chain was
recomputed, which anyone can do with `renature.events.seal`. So the rules service also signs:
with an Ed25519 key of its own (``RENATURE_SIGNING_KEY_FILE``: a PEM private key, a Kubernetes
Secret mounted as a file) it signs a `Seal` of each game when the game ends, and of the running
game every `SEAL_EVERY` events: the game id, the number of events and the SHA-256 of each
event's stored bytes (the bytes an export writes, one event per line). The latest seal of a game
is kept in ``<prefix>:{pNN}:seal:<game_id>``; ``renature export`` appends it to the file as a
last line ``{"seal": {...}}``; ``renature audit --events FILE --key KEY`` checks the signature
with a public key (a PEM file, or the gateway's ``/.well-known/renature-keys.json``) and then
every event line against its signed digest, naming the first event that differs (a re-sealed
event, a missing one).

A key's id is the first 16 hex digits of the SHA-256 of its raw public key. Every signing key
the rules service has used stays listed in ``<prefix>:signing-keys`` (id -> public key, base64),
which the gateway publishes: rotate by mounting a new key (the old seals still verify against
the old public key, which stays listed; see docs/security.md).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gameserver.runtime.logging import get_logger

if TYPE_CHECKING:  # the CLI reads seals without importing redis (a third of a second)
    from redis.asyncio import Redis

    from eventstore import EventStore, KeyLayout, RedisEventStore
    from gameplatform.interface import HostedState
    from gameserver.runtime.state_cache import StateCache

log = get_logger("renature.signing")

SEAL_EVERY = 64
"""A running game is sealed again each time it passes a multiple of this many events."""
SEAL_CONTEXT = b"renature-seal/1\n"
"""Signed before the seal's body: a signature made for anything else never verifies as a seal."""


class Seal(msgspec.Struct, frozen=True):
    """The server's signature over the first ``events`` events of a game."""

    key_id: str
    game_id: str
    events: int
    digests: list[str]
    """SHA-256 (hex) of each event's stored bytes, in order: ``digests[n - 1]`` is event n's."""
    signature: str
    """Ed25519 over `SEAL_CONTEXT` and the JSON of ``[game_id, events, digests]`` (base64)."""


class SealLine(msgspec.Struct, frozen=True):
    """How an export carries its seal: a last line ``{"seal": {...}}``."""

    seal: Seal


SEAL_LINE = b'{"seal":'
"""How the seal line of an export begins: readers of the events skip it."""


class PublicKey(msgspec.Struct, frozen=True):
    key_id: str
    public_key: str
    """The raw 32-byte Ed25519 public key, base64."""
    algorithm: str = "Ed25519"


class KeySet(msgspec.Struct, frozen=True):
    """The document the gateway publishes at ``/.well-known/renature-keys.json``."""

    keys: list[PublicKey]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    return hashlib.sha256(_raw(key)).hexdigest()[:16]


def public_key_entry(key: Ed25519PublicKey) -> PublicKey:
    return PublicKey(key_id(key), base64.b64encode(_raw(key)).decode())


def _signed_bytes(game_id: str, events: int, digests: Sequence[str]) -> bytes:
    return SEAL_CONTEXT + msgspec.json.encode([game_id, events, list(digests)])


def new_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_private_key(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} holds no Ed25519 private key")
    return key


def sign(key: Ed25519PrivateKey, game_id: str, stored: Iterable[bytes]) -> Seal:
    """The seal of a game whose events, as stored, are ``stored`` (in order)."""
    digests = [digest(data) for data in stored]
    signature = key.sign(_signed_bytes(game_id, len(digests), digests))
    kid = key_id(key.public_key())
    return Seal(kid, game_id, len(digests), digests, base64.b64encode(signature).decode())


def read_public_keys(data: bytes) -> dict[str, Ed25519PublicKey]:
    """Public keys by id from a PEM public key or a `KeySet` document (ValueError if neither)."""
    if data.lstrip().startswith(b"-----BEGIN"):
        key = serialization.load_pem_public_key(data)
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("the PEM file holds no Ed25519 public key")
        return {key_id(key): key}
    try:
        keyset = msgspec.json.decode(data, type=KeySet)
        return {
            entry.key_id: Ed25519PublicKey.from_public_bytes(base64.b64decode(entry.public_key))
            for entry in keyset.keys
            if entry.algorithm == "Ed25519"
        }
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as error:
        raise ValueError(f"not a PEM public key nor a key set: {error}") from None


def check_seal(seal: Seal, keys: Mapping[str, Ed25519PublicKey]) -> str | None:
    """Why ``seal`` is not the server's (None when its signature verifies with ``keys``)."""
    key = keys.get(seal.key_id)
    if key is None:
        return f"the seal is signed by key {seal.key_id!r}, which is not among the keys given"
    if len(seal.digests) != seal.events:
        return "the seal's digests do not match its event count"
    try:
        key.verify(
            base64.b64decode(seal.signature), _signed_bytes(seal.game_id, seal.events, seal.digests)
        )
    except (InvalidSignature, ValueError):
        return f"the seal's signature does not verify with key {seal.key_id}"
    return None


def first_difference(seal: Seal, lines: Sequence[bytes]) -> str | None:
    """What differs between the event ``lines`` of a file and what ``seal`` signed, naming the
    first event that differs (None when the file holds exactly the signed events, or the
    signed events followed by later ones)."""
    for number, (line, signed) in enumerate(zip(lines, seal.digests, strict=False), start=1):
        if digest(line) != signed:
            return f"event {number} differs from what the server signed"
    if len(lines) < seal.events:
        return (
            f"event {len(lines) + 1} is missing: the server signed {seal.events} events, "
            f"the file holds {len(lines)} (truncated)"
        )
    return None


# -- the rules service's side: sealing games as they are appended ----------------------------

SIGNING_KEY_ENV = "RENATURE_SIGNING_KEY_FILE"


def key_from_env(env: Mapping[str, str]) -> Ed25519PrivateKey | None:
    """The signing key the environment names (None: this deployment signs nothing)."""
    path = env.get(SIGNING_KEY_ENV)
    return load_private_key(Path(path)) if path else None


async def sealer_from_env(
    env: Mapping[str, str], redis: Redis, store: RedisEventStore
) -> Sealer | None:
    """A `Sealer` with the environment's key, its key published; None without a key."""
    key = key_from_env(env)
    if key is None:
        return None
    sealer = Sealer(redis, store, store.layout, key)
    await sealer.publish_key()
    return sealer


class Sealer:
    """Seals games in Redis with the rules service's key (see the module docstring)."""

    def __init__(self, redis: Redis, store: EventStore, layout: KeyLayout, key: Ed25519PrivateKey):
        self.redis, self.store, self.layout, self.key = redis, store, layout, key
        self.entry = public_key_entry(key.public_key())

    async def publish_key(self) -> None:
        """List this key among the deployment's signing keys (old ones stay listed)."""
        await self.redis.hset(
            self.layout.signing_keys_key(), self.entry.key_id, self.entry.public_key
        )

    async def seal_due(self, replies: Sequence[bytes], cache: StateCache[HostedState]) -> None:
        """Seal each game that an accepted reply took past a multiple of `SEAL_EVERY` events
        or to its end (as the handler's ``cache`` has it). A failure is logged: sealing never
        holds up or fails a command."""
        from gameserver.runtime import bus

        due: set[str] = set()
        for raw in replies:
            reply = bus.reply_decoder.decode(raw)
            if reply.status != "accepted" or reply.last_version < 1:
                continue
            crossed = reply.last_version // SEAL_EVERY > (reply.first_version - 1) // SEAL_EVERY
            entry = cache.get(reply.game_id)
            if crossed or (entry is not None and entry.adapter.is_over(entry.value)):
                due.add(reply.game_id)
        for game_id in sorted(due):
            try:
                await self.seal(game_id)
            except Exception:
                log.exception("seal_failed", game_id=game_id)

    async def seal(self, game_id: str) -> Seal:
        stored = await self.store.read(game_id)
        sealed = sign(self.key, game_id, [event.data for event in stored])
        await self.redis.set(self.layout.seal_key(game_id), msgspec.json.encode(sealed))
        log.info("game_sealed", game_id=game_id, events=sealed.events, key_id=sealed.key_id)
        return sealed


async def stored_seal(redis: Redis, layout: KeyLayout, game_id: str) -> Seal | None:
    """The latest seal of a game (None when it has none)."""
    raw = await redis.get(layout.seal_key(game_id))
    return None if raw is None else msgspec.json.decode(raw, type=Seal)


async def published_keys(redis: Redis, layout: KeyLayout) -> KeySet:
    """Every signing key the rules service has used (the gateway's well-known document)."""
    entries = await redis.hgetall(layout.signing_keys_key())
    keys = [PublicKey(_text(kid), _text(value)) for kid, value in sorted(entries.items())]
    return KeySet(keys)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
