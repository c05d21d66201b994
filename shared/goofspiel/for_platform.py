"""What every event-sourced game on this server shares, written once for Goofspiel.

Meant for the platform (``gameplatform``): the hash chain and sealing, the seed commitment and
the portable shuffle, the audit's report shapes and its chain check, batches by cause, the
replay fold and the digest of an event log. Nothing here knows Goofspiel; when the platform
offers these, this module is replaced by imports of the platform's own.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import msgspec
from msgspec.structs import replace

_encoder = msgspec.json.Encoder()
T = TypeVar("T")
S = TypeVar("S")
E = TypeVar("E", bound="Chained")


class Chained(Protocol):
    """An event as the chain sees it: its version, its links and what caused its batch."""

    @property
    def version(self) -> int: ...
    @property
    def prev_hash(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def cause(self) -> Any: ...


# --- the hash chain --------------------------------------------------------------------------
def chain_hash(event: msgspec.Struct) -> str:
    """The SHA-256 of the event's JSON with ``hash`` empty."""
    return hashlib.sha256(_encoder.encode(replace(event, hash=""))).hexdigest()


def seal(event: E, prev_hash: str) -> E:
    """The event linked to its predecessor and stamped with its own hash."""
    linked = replace(event, prev_hash=prev_hash)  # type: ignore[type-var]
    return replace(linked, hash=chain_hash(linked))  # type: ignore[type-var,arg-type]


# --- seeds -----------------------------------------------------------------------------------
SALTED = "hmac-sha256:"


def commitment(seed: str, salt: str = "") -> str:
    """The commitment to a seed published at creation: the hex SHA-256 of the seed, or with a
    salt ``hmac-sha256:`` and the HMAC-SHA256 of the seed keyed with the salt (so that a short
    seed cannot be guessed from it before the end)."""
    if salt:
        mac = hmac.new(salt.encode(), seed.encode(), hashlib.sha256)
        return SALTED + mac.hexdigest()
    return hashlib.sha256(seed.encode()).hexdigest()


def portable_shuffle(seed: str, purpose: str, items: Sequence[T]) -> list[T]:
    """Fisher-Yates from the last position down; the j-th swap takes position
    ``sha256("{seed}|{purpose}|{j}") mod (i + 1)`` (big-endian), reproducible anywhere."""
    deck = list(items)
    positions = range(len(deck) - 1, 0, -1)
    for draw, position in enumerate(positions):
        number = int.from_bytes(hashlib.sha256(f"{seed}|{purpose}|{draw}".encode()).digest())
        other = number % (position + 1)
        deck[position], deck[other] = deck[other], deck[position]
    return deck


# --- replay and batches ----------------------------------------------------------------------
def fold(evolve: Callable[[S | None, T], S], events: Iterable[T]) -> S | None:
    """The state after ``events``: a fold of ``evolve`` from nothing (None for no events)."""
    state: S | None = None
    for event in events:
        state = evolve(state, event)
    return state


def batches(events: Sequence[E]) -> list[list[E]]:
    """Events grouped by the command that caused them (a batch starts with its cause)."""
    grouped: list[list[E]] = []
    for event in events:
        if not grouped or event.cause is not None:
            grouped.append([])
        grouped[-1].append(event)
    return grouped


def log_digest(encoded: Iterable[bytes]) -> str:
    """The SHA-256 of an event log, one encoded event a line (a corpus pins a log by it)."""
    digest = hashlib.sha256()
    for line in encoded:
        digest.update(line + b"\n")
    return digest.hexdigest()


# --- the audit's shapes and its chain check ---------------------------------------------------
class Finding(msgspec.Struct, frozen=True):
    """One thing that does not hold: which event (its version, 1-based), which check, what."""

    version: int
    check: str
    message: str


class AuditReport(msgspec.Struct, frozen=True):
    """One report shape for every game's audit."""

    game_id: str
    ok: bool
    events: int
    batches: int
    finished: bool
    checks: list[str]
    first_bad: Finding | None = None
    findings: list[Finding] = []
    scores: list[int] = []
    winners: list[int] = []


def check_chain(events: Sequence[E]) -> list[Finding]:
    """Versions 1, 2, 3 ... and every event linked to the one before and matching its hash."""
    found: list[Finding] = []
    previous = ""
    for number, event in enumerate(events, start=1):
        kind = type(event).__name__
        if event.version != number:
            message = f"event number {number} carries version {event.version}: an event was "
            found.append(Finding(number, "versions", message + "dropped, added or moved"))
        if event.prev_hash != previous:
            message = f"event {number} ({kind}) does not link to the event before it: "
            found.append(Finding(number, "hash chain", message + "changed, dropped or reordered"))
        if event.hash != chain_hash(event):  # type: ignore[arg-type]
            message = f"event {number} ({kind}) does not match its own hash: "
            found.append(Finding(number, "hash chain", message + "changed after it was written"))
        previous = event.hash
    return found


def differences(stored: msgspec.Struct, expected: msgspec.Struct) -> str:
    """How a stored event differs from the one the rules give, in a reader's words."""
    if type(stored) is not type(expected):
        return f"it is a {type(stored).__name__}, the rules give a {type(expected).__name__}"
    ours, theirs = msgspec.to_builtins(stored), msgspec.to_builtins(expected)
    changed = [
        key for key in theirs if key not in ("hash", "prev_hash") and ours.get(key) != theirs[key]
    ]
    changed = changed or [key for key in theirs if ours.get(key) != theirs[key]]
    said = "; ".join(
        f"{key}: stored {ours.get(key)!r}, rules give {theirs[key]!r}" for key in changed
    )
    return f"{type(stored).__name__} differs from what the rules give ({said})"


# --- the execute skeleton --------------------------------------------------------------------
class Sealed(Protocol):
    """A state as the batch needs it: the game, its version and the hash of its last event."""

    game_id: str
    version: int
    last_hash: str


class Batch:
    """The events of one command, each sealed onto the chain and applied as it is emitted so
    that later steps of the command see its effect; the first carries the command's cause."""

    def __init__(self, state: Any, cause: Any, evolve: Callable[[Any, Any], Any]) -> None:
        self.state = state
        self.cause = cause
        self.events: list[Any] = []
        self._evolve = evolve

    def emit(self, kind: type[Any], /, **fields: Any) -> None:
        state: Sealed = self.state
        event = kind(game_id=state.game_id, version=state.version + 1, cause=self.cause, **fields)
        self.cause = None
        sealed = seal(event, state.last_hash)
        self.events.append(sealed)
        self.state = self._evolve(self.state, sealed)
