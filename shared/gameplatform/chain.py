"""The hash chain every game's stream is sealed into, and the event base every game extends.

Every event carries its game id, its version (1-based position in the game's stream), the acting
seat (``None`` for the rules themselves), the cause of its batch (on the batch's first event)
and the chain: ``hash`` is the SHA-256 of the event's canonical bytes (its JSON with ``hash``
empty), which include ``prev_hash``, the previous event's ``hash`` ("" for the first event).
Changing, dropping or reordering any stored event breaks the chain. Security-critical: this is
the one place that computes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace


class Event(msgspec.Struct, frozen=True, tag_field="type", kw_only=True):
    """Base of every game's events (tagged by ``type``). A game's own base narrows ``cause`` to
    its ``Cause`` (the command that caused the batch, the client's command id, the time); the
    fields keep this order, so the canonical bytes are what they always were."""

    game_id: str
    version: int
    seat: int | None = None
    cause: Any = None
    prev_hash: str = ""
    hash: str = ""


E = TypeVar("E", bound=Event)

json_encoder = msgspec.json.Encoder()


def encode(event: Event) -> bytes:
    return json_encoder.encode(event)


def canonical_bytes(event: Event) -> bytes:
    return json_encoder.encode(replace(event, hash=""))


def chain_hash(event: Event) -> str:
    return hashlib.sha256(canonical_bytes(event)).hexdigest()


def seal(event: E, prev_hash: str) -> E:
    """The event linked to its predecessor and stamped with its own hash."""
    linked = replace(event, prev_hash=prev_hash)
    return replace(linked, hash=chain_hash(linked))


def log_digest(log: Iterable[Event]) -> str:
    """SHA-256 of an event log as ``simulate --events`` writes it (one JSON line per event)."""
    digest = hashlib.sha256()
    for event in log:
        digest.update(encode(event) + b"\n")
    return digest.hexdigest()
