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
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gameserver.runtime.logging import get_logger

if TYPE_CHECKING:  # the CLI reads seals without importing redis (a third of a second)
    from redis.asyncio import Redis

    from eventstore import EventStore, KeyLayout, RedisEventStore
    from gameplatform.interface import HostedState
    from gameserver.runtime.settings_parts import Signing
    from gameserver.runtime.state_cache import StateCache

log = get_logger("renature.signing")

SEAL_EVERY = 64
"""A running game is sealed again each time it passes a multiple of this many events."""
SEAL_CONTEXT = b"renature-seal/1\n"
"""Signed before the seal's body: a signature made for anything else never verifies as a seal."""


KeyId = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{16}$")]
Digest = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class Seal(msgspec.Struct, frozen=True):
    """The server's signature over the first ``events`` events of a game. Every field is
    bounded: a seal line in a file someone else made is read before it is believed, and its
    values appear in messages."""

    key_id: KeyId
    game_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    events: Annotated[int, msgspec.Meta(ge=0)]
    digests: list[Digest]
    """SHA-256 (hex) of each event's stored bytes, in order: ``digests[n - 1]`` is event n's."""
    signature: Annotated[str, msgspec.Meta(max_length=128)]
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


def write_new_key(path: Path) -> Ed25519PrivateKey:
    """A new key, written to ``path`` as PEM (mode 0600; FileExistsError if ``path`` exists:
    a key in use is never overwritten)."""
    key = new_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        out.write(private_pem(key))
    return key


def key_file(path: Path) -> Ed25519PrivateKey:
    """The key in ``path``, made there (`write_new_key`) the first time."""
    try:
        return write_new_key(path)
    except FileExistsError:
        return load_private_key(path)


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
        keys = {
            entry.key_id: Ed25519PublicKey.from_public_bytes(base64.b64decode(entry.public_key))
            for entry in keyset.keys
            if entry.algorithm == "Ed25519"
        }
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as error:
        raise ValueError(f"not a PEM public key nor a key set: {error}") from None
    # An id is its key's digest: an entry that names another key's id proves nothing.
    return {kid: key for kid, key in keys.items() if key_id(key) == kid}


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
    number = first_differing_event(seal, lines)
    if number is None:
        return None
    if number > len(lines):
        return (
            f"event {number} is missing: the server signed {seal.events} events, "
            f"the file holds {len(lines)} (truncated)"
        )
    return f"event {number} differs from what the server signed"


def first_differing_event(seal: Seal, lines: Sequence[bytes]) -> int | None:
    """The number of the first event of ``lines`` that is not the one ``seal`` signed, or the
    first signed event the file lacks (None: the signed events are all there, unchanged)."""
    for number, (line, signed) in enumerate(zip(lines, seal.digests, strict=False), start=1):
        if digest(line) != signed:
            return number
    return len(lines) + 1 if len(lines) < seal.events else None


class SealVerdict(msgspec.Struct, frozen=True):
    """What a file's seal proves against a server's published keys: ``signed`` (events 1 to
    ``signed_events`` are the ones the server signed with key ``key_id``; any later ones are
    not signed), ``not_signed`` (no seal, or none this server's keys verify) or ``differs``
    (a seal of this server, but event ``first_difference`` is not what it signed, or is
    missing)."""

    status: Literal["signed", "not_signed", "differs"]
    message: str
    key_id: str | None = None
    signed_events: int = 0
    first_difference: int | None = None


def verdict(
    seal: Seal | None, keys: Mapping[str, Ed25519PublicKey], lines: Sequence[bytes]
) -> SealVerdict:
    """The `SealVerdict` of a file's event ``lines`` and its ``seal`` against ``keys``."""
    if seal is None:
        return SealVerdict("not_signed", "the file carries no seal of the server")
    problem = check_seal(seal, keys)
    if problem is not None:
        return SealVerdict("not_signed", problem, seal.key_id)
    number = first_differing_event(seal, lines)
    if number is not None:
        message = first_difference(seal, lines) or ""
        return SealVerdict("differs", message, seal.key_id, seal.events, number)
    message = f"signed by the server (key {seal.key_id}): events 1 to {seal.events}"
    if len(lines) > seal.events:
        message += f"; events {seal.events + 1} to {len(lines)} came later and are not signed"
    return SealVerdict("signed", message, seal.key_id, seal.events)


# -- the rules service's side: sealing games as they are appended ----------------------------


async def sealer_for(signing: Signing, redis: Redis, store: RedisEventStore) -> Sealer | None:
    """A `Sealer` with the settings' key (``RENATURE_SIGNING_KEY_FILE``), its key published;
    None without a key: this deployment signs nothing."""
    if not signing.signing_key_file:
        return None
    key = load_private_key(Path(signing.signing_key_file))
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
    """Every signing key the rules service has used (the gateway's well-known document), each
    under its own id only."""
    entries = await redis.hgetall(layout.signing_keys_key())
    keys = [PublicKey(_text(kid), _text(value)) for kid, value in sorted(entries.items())]
    return KeySet([entry for entry in keys if _names_its_key(entry)])


def _names_its_key(entry: PublicKey) -> bool:
    """Whether an entry's id is its key's (one written under another key's id is left out)."""
    try:
        raw = base64.b64decode(entry.public_key, validate=True)
        return key_id(Ed25519PublicKey.from_public_bytes(raw)) == entry.key_id
    except ValueError:
        return False


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
