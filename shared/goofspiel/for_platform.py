"""What every event-sourced game on this server shares, written once for Goofspiel.

Meant for the platform (``gameplatform``): the hash chain and sealing, the seed commitment and
the portable shuffle, the audit's report shapes and its chain check, batches by cause, the
replay fold and the digest of an event log. Nothing here knows Goofspiel; when the platform
offers these, this module is replaced by imports of the platform's own.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import msgspec
from msgspec.structs import replace

_encoder = msgspec.json.Encoder()
T = TypeVar("T")
S = TypeVar("S")
E = TypeVar("E", bound="Chained")


C = TypeVar("C")


class Cause(msgspec.Struct, Generic[C], frozen=True):
    """The command that caused a batch (on its first event), the client's id and the time."""

    command: C
    command_id: str | None = None
    time: str | None = None


class ChainedEvent(msgspec.Struct, Generic[C], frozen=True, tag_field="type", kw_only=True):
    """What every event carries: the game, its version (1-based position in the stream), the
    acting seat (None for the rules themselves), the cause on a batch's first event, and the
    hash chain. A game's events subclass ``ChainedEvent[ItsCommands]``."""

    game_id: str
    version: int
    seat: int | None = None
    cause: Cause[C] | None = None
    prev_hash: str = ""
    hash: str = ""


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


# --- rule errors -----------------------------------------------------------------------------
class RuleError(Exception):
    """A command the rules refuse; ``code`` is stable and part of the protocol."""

    code = "rule_broken"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidCommand(RuleError):
    code = "invalid_command"


class GameNotFound(RuleError):
    code = "game_not_found"


class GameAlreadyExists(RuleError):
    code = "game_exists"


class WrongPhase(RuleError):
    """The command does not fit the current step of the game."""

    code = "wrong_phase"


class NotYourTurn(RuleError):
    code = "not_your_turn"


# --- execute ---------------------------------------------------------------------------------
def execute_with(
    state: Any,
    command: Any,
    cause: Any,
    *,
    creation: type[Any],
    create: Callable[[Any], Any],
    deciders: dict[type[Any], Callable[[Batch, Any], None]],
    evolve: Callable[[Any, Any], Any],
) -> tuple[list[Any], Any]:
    """A command decided: a ``creation`` makes the first event (``create``) of a game that
    does not exist; any other is handed to its decider with a `Batch` on an existing game.
    Returns the sealed events and the state after them."""
    if isinstance(command, creation):
        if state is not None:
            raise GameAlreadyExists("A game with this id exists already.")
        first = seal(replace(create(command), cause=cause), "")
        return [first], evolve(None, first)
    if state is None:
        raise GameNotFound("There is no such game; create it first.")
    decider = deciders.get(type(command))
    if decider is None:
        raise InvalidCommand(f"Unknown command {type(command).__name__}.")
    batch = Batch(state, cause, evolve)
    decider(batch, command)
    return batch.events, batch.state


# --- codecs ----------------------------------------------------------------------------------
class Codec:
    """JSON in and out for a tagged union of msgspec structs (a game's events)."""

    def __init__(self, union: Any) -> None:
        self._decoder = msgspec.json.Decoder(union)

    def encode(self, value: Any) -> bytes:
        return _encoder.encode(value)

    def decode(self, data: bytes | str) -> Any:
        return self._decoder.decode(data)


# --- the audit -------------------------------------------------------------------------------
CHECK_ORDER = (
    "stream",
    "versions",
    "hash chain",
    "seed",
    "provenance",
    "legality",
    "rules",
    "scores",
)


def redecide(
    state: Any,
    batch: Sequence[Any],
    command: Any,
    execute: Callable[..., tuple[list[Any], Any]],
) -> tuple[list[Finding], list[Any], Any]:
    """A batch's command decided again on the replayed state: (findings, events, state after);
    a refusal is a ``legality`` finding. ``execute`` raises `RuleError` for a refusal."""
    first = batch[0]
    try:
        expected, after = execute(
            state, command, command_id=first.cause.command_id, time=first.cause.time
        )
    except RuleError as error:
        told = f"the recorded {type(command).__name__} is illegal: {error.message}"
        return [Finding(first.version, "legality", told)], [], None
    return [], expected, after


def compare_batch(batch: Sequence[Any], expected: Sequence[Any]) -> list[Finding]:
    """Where the stored batch differs from the events the rules give (the first place)."""
    for stored, wanted in zip(batch, expected, strict=False):
        if stored != wanted:
            return [Finding(stored.version, "rules", differences(stored, wanted))]
    if len(batch) == len(expected):
        return []
    at = batch[min(len(batch), len(expected)) - 1].version
    told = f"the command gives {len(expected)} events, the stream holds {len(batch)}"
    return [Finding(at, "rules", told)]


def report(
    events: Sequence[Any],
    findings: list[Finding],
    checks: list[str],
    finished: bool,
    result: tuple[list[int], list[int]] | None,
) -> AuditReport:
    """The report: findings in stream order; scores and winners only when all holds."""
    findings = sorted(findings, key=lambda f: (f.version, CHECK_ORDER.index(f.check)))
    good = result is not None and not findings
    return AuditReport(
        game_id=events[0].game_id if events else "",
        ok=not findings,
        events=len(events),
        batches=len(batches(events)),
        finished=finished,
        checks=checks,
        first_bad=findings[0] if findings else None,
        findings=findings,
        scores=result[0] if good and result else [],
        winners=result[1] if good and result else [],
    )


# --- the corpus ------------------------------------------------------------------------------
def check_corpus(recorded: Any, replayed: Callable[[], Any]) -> list[str]:
    """A corpus game checked: ``replayed()`` plays its commands again (a refusal is a
    difference); then `corpus_differences`."""
    if len(recorded.legal_actions) != len(recorded.commands):
        return ["the record has not one legal-action count per command"]
    try:
        found = replayed()
    except RuleError as error:
        return [f"a recorded command is refused: {error.message}"]
    return corpus_differences(recorded, found)


def corpus_differences(recorded: Any, found: Any) -> list[str]:
    """What a corpus game replayed (``found``) differs in from its record: the legal-action
    count before each command, then the result and the event log's digest."""
    counts = zip(recorded.commands, found.legal_actions, recorded.legal_actions, strict=True)
    for number, (command, counted, expected) in enumerate(counts, start=1):
        if counted != expected:
            seat = command.seat
            return [f"command {number}: seat {seat} has {counted} legal actions, not {expected}"]
    problems = []
    got = (found.events, found.scores, found.ranking)
    wanted = (recorded.events, recorded.scores, recorded.ranking)
    if got != wanted:
        problems.append(f"(events, scores, ranking) {got}, not {wanted}")
    if found.winners != recorded.winners:
        problems.append(f"winners {found.winners}, not {recorded.winners}")
    if found.log_sha256 != recorded.log_sha256:
        problems.append("the event log differs from the recorded one")
    return problems


# --- shapes every game reports ----------------------------------------------------------------
class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """The result of a whole game as ``simulate`` reports it (a game adds its own fields)."""

    game_id: str
    game: str
    players: int
    bots: list[str]
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]
    events: int


class PointLine(msgspec.Struct, frozen=True, kw_only=True):
    """Points one seat got from one event, its running total and why, in a player's words."""

    version: int
    seat: int
    colour: str
    points: int
    total: int
    text: str


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """Where every point came from (a game adds its lines' type and its own fields)."""

    game_id: str
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]


class CorpusRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A recorded game of a corpus: the legal actions counted before each command, the result
    and the digest of the event log (a game adds its set-up and its commands)."""

    seed: str
    bots: list[str]
    legal_actions: list[int]
    """How many legal actions the acting seat had just before each command."""
    events: int
    log_sha256: str
    scores: list[int]
    ranking: list[int]
    winners: list[int]


class RandomBot:
    """Any legal action, uniformly, from the bot's own seeded generator."""

    def __init__(self, seed: str, legal_actions: Callable[[Any, int], list[Any]]) -> None:
        self.rng = random.Random(seed)
        self._legal_actions = legal_actions

    def choose(self, state: Any, seat: int) -> Any:
        return self.rng.choice(self._legal_actions(state, seat))
