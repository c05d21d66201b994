"""Dispute audit, the same for every game: prove from the stored events alone that a game was
played by the rules, and say in one report shape (`AuditReport` of `Finding`s) what does not hold.

The checks, in order of the stream:
- the hash chain: every event's ``prev_hash`` is its predecessor's ``hash``, and its ``hash`` is
  the SHA-256 of its canonical bytes (so a changed, dropped or reordered event is caught);
- versions run 1, 2, 3, ... without gaps; the stream starts with the game's creation;
- every batch starts with its cause (the recorded command) and re-deciding that command on the
  replayed state gives exactly the stored events (an illegal move is caught here even when its
  forger recomputed the hash chain);
- at the end, every seat's final score equals the sum of the points its events award.

A game's `Auditor` subclass names its rules and adds its own checks (Renature: the seed's
commitment and the deal; Renaissance: each set recounted from the pieces).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from gameplatform.chain import Event, chain_hash
from gameplatform.errors import RuleError
from gameplatform.execution import Rulebook, Versioned

CHECK_ORDER = (
    "stream",
    "versions",
    "hash chain",
    "provenance",
    "seed",
    "deal",
    "legality",
    "rules",
    "sealed",
    "scores",
)
"""The order of findings at the same event."""

NO_CAUSE = "the batch records no command"


class Finding(msgspec.Struct, frozen=True):
    """One thing that does not hold: which event (its version, 1-based), which check, what."""

    version: int
    check: str
    message: str


class AuditReport(msgspec.Struct, frozen=True):
    """The verdict on a game's events, of every game: ``ok`` only when every check holds."""

    game_id: str
    ok: bool
    events: int
    batches: int
    finished: bool
    checks: list[str]
    """The checks that held (one with a finding is left out: see `findings`)."""
    first_bad: Finding | None = None
    findings: list[Finding] = []
    scores: list[int] = []
    winners: list[int] = []


def failed(finding: Finding, game_id: str = "") -> AuditReport:
    """The report of a stream that could not be audited at all (no events, no readable ones)."""
    return AuditReport(game_id, False, 0, 0, False, [], finding, [finding])


def check_chain(events: Sequence[Event]) -> list[Finding]:
    findings = []
    prev = ""
    for position, event in enumerate(events, start=1):
        name = type(event).__name__
        if event.version != position:
            findings.append(
                Finding(
                    position,
                    "versions",
                    f"event number {position} carries version {event.version}: "
                    "an event was dropped, added or moved",
                )
            )
        if event.prev_hash != prev:
            findings.append(
                Finding(
                    position,
                    "hash chain",
                    f"event {position} ({name}) does not link to the event before it: "
                    "an event was changed, dropped or reordered",
                )
            )
        if event.hash != chain_hash(event):
            findings.append(
                Finding(
                    position,
                    "hash chain",
                    f"event {position} ({name}) does not match its own hash: "
                    "it was changed after it was written",
                )
            )
        prev = event.hash
    return findings


E = TypeVar("E", bound=Event)


def batches(events: Sequence[E]) -> list[list[E]]:
    """Events grouped by the command that caused them (a batch starts with its cause)."""
    out: list[list[E]] = []
    for event in events:
        if event.cause is not None or not out:
            out.append([])
        out[-1].append(event)
    return out


def differences(stored: Event, expected: Event) -> str:
    if type(stored) is not type(expected):
        return f"it is a {type(stored).__name__}, the rules give a {type(expected).__name__}"
    ours = msgspec.to_builtins(stored)
    theirs = msgspec.to_builtins(expected)
    fields = [k for k in theirs if k not in ("hash", "prev_hash") and ours.get(k) != theirs[k]]
    if not fields:
        fields = [k for k in theirs if ours.get(k) != theirs[k]]
    shown = "; ".join(_shown(k, ours.get(k), theirs[k]) for k in fields)
    return f"{type(stored).__name__} differs from what the rules give ({shown})"


def _shown(name: str, ours: object, theirs: object) -> str:
    """``name: stored X, rules give Y``, narrowed to the differing parts of a nested object
    (a forged deal names ``deal.hands``, not the whole deal)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = [k for k in theirs if ours.get(k) != theirs[k]]
        keys += [k for k in ours if k not in theirs]
        if keys:
            return "; ".join(_shown(f"{name}.{k}", ours.get(k), theirs.get(k)) for k in keys)
    return f"{name}: stored {ours!r}, rules give {theirs!r}"


def _count(events: int) -> str:
    return f"{events} event" if events == 1 else f"{events} events"


def _count_differs(batch: Sequence[Event], expected: Sequence[Event]) -> Finding:
    given = f"the command gives {_count(len(expected))}, the stream holds {_count(len(batch))}"
    if len(batch) > len(expected):  # the first event the stream holds beyond the rules'
        extra = batch[len(expected)]
        at, what = extra.version, f"event {extra.version} ({type(extra).__name__}) is extra"
    else:  # the first event the rules give that the stream lacks
        missing = expected[len(batch)]
        at = missing.version
        what = f"event {missing.version} ({type(missing).__name__}) is missing"
    return Finding(at, "rules", f"{given}: {what}")


def points_add_up(
    events: Sequence[E],
    scores: Sequence[int],
    points_awarded: Callable[[E], list[tuple[int, int, str]]],
) -> list[str]:
    """Each seat's points, added up from the events, against its final score."""
    totals = [0] * len(scores)
    for event in events:
        for seat, points, _ in points_awarded(event):
            totals[seat] += points
    return [
        f"seat {seat}'s points add up to {totals[seat]}, not {score}"
        for seat, score in enumerate(scores)
        if totals[seat] != score
    ]


class Finishable(Versioned, Protocol):
    """What the audit reads of a game's state beyond its scores."""

    @property
    def is_over(self) -> bool: ...

    @property
    def winners(self) -> Sequence[int]: ...


S = TypeVar("S", bound=Finishable)


def held(checks: list[str], findings: Sequence[Finding]) -> list[str]:
    """The checks that held: a check with a finding is not listed as checked, so a
    report never claims a check both held and failed."""
    failed = {finding.check for finding in findings}
    return [check for check in checks if check not in failed]


class Auditor(Generic[S, E]):
    """One audit of one stream: the game's rules (its `Rulebook`), its creation event's type,
    each seat's score in a state and the points its events award. A game with checks of its
    own subclasses it and fills the hooks below."""

    def __init__(
        self,
        events: Sequence[E],
        *,
        rules: Rulebook[S, Any, E],
        created: type[E],
        scores: Callable[[S], list[int]],
        points_awarded: Callable[[E], list[tuple[int, int, str]]],
    ) -> None:
        self.events = events
        self.rules = rules
        self.created = created
        self.scores = scores
        self.points_awarded = points_awarded

    # --- hooks for a game's own checks ---------------------------------------------------------

    def check_start(self, findings: list[Finding]) -> None:
        """Checks of the whole stream before any command is re-decided."""

    def command(self, command: Any) -> Any | None:
        """The recorded command as it is re-decided (None: stop re-deciding here)."""
        return command

    def expected(self, batch: Sequence[E], expected: list[E]) -> tuple[list[E], bool]:
        """What the stored batch is compared with, and whether the re-decided state after it
        is vouched for (when not, the stored events are folded instead)."""
        return expected, True

    def mismatch(self, stored: E, wanted: E) -> str:
        """The check a stored event that differs from the rules' breaks."""
        return "rules"

    def recount(self, state: S) -> list[str]:
        """What does not add up at the end of a finished game."""
        return points_add_up(self.events, self.scores(state), self.points_awarded)

    def checks(self, finished: bool) -> list[str]:
        """The checks the report lists beyond the chain, the versions and the re-decisions."""
        return []

    # --- the audit -----------------------------------------------------------------------------

    def report(self) -> AuditReport:
        """Audit the whole stream; ``ok`` only when every check holds."""
        events = self.events
        if not events:
            return failed(Finding(0, "stream", "there are no events"))
        findings = check_chain(events)
        if not isinstance(events[0], self.created):
            findings.append(Finding(1, "stream", "the first event is not the game's creation"))
        self.check_start(findings)
        groups = batches(events)
        state = self._redecide_all(groups, findings)
        finished = state is not None and state.is_over
        if state is not None and finished and not findings:
            findings += [Finding(events[-1].version, "scores", p) for p in self.recount(state)]
        findings.sort(key=lambda f: (f.version, CHECK_ORDER.index(f.check)))
        good = state is not None and not findings
        return AuditReport(
            game_id=events[0].game_id,
            ok=not findings,
            events=len(events),
            batches=len(groups),
            finished=finished,
            checks=held(
                ["hash chain", "versions", "every command re-decided", *self.checks(finished)],
                findings,
            ),
            first_bad=findings[0] if findings else None,
            findings=findings,
            scores=self.scores(state) if good and state is not None else [],
            winners=list(state.winners) if good and state is not None else [],
        )

    def _redecide_all(self, groups: Sequence[list[E]], findings: list[Finding]) -> S | None:
        """Every batch re-decided in order, up to the first bad one; the state reached."""
        state: S | None = None
        for batch in groups:
            first = batch[0]
            if first.cause is None:
                findings.append(
                    Finding(first.version, "provenance", "the batch records no command")
                )
                break
            command = self.command(first.cause.command)
            if command is None:
                break
            problems, after, verified = self._redecide(state, batch, command)
            findings += problems
            if problems:
                break  # everything after the first bad batch stands on a false state
            if verified:
                state = after
            else:
                for event in batch:
                    state = self.rules.evolve(state, event)
        return state

    def _redecide(
        self, state: S | None, batch: list[E], command: Any
    ) -> tuple[list[Finding], S | None, bool]:
        """Re-run the batch's recorded command. Returns (findings, state after, verified)."""
        first = batch[0]
        try:
            expected, after = self.rules.execute(
                state, command, command_id=first.cause.command_id, time=first.cause.time
            )
        except RuleError as err:
            name = type(command).__name__
            message = f"the recorded {name} is illegal: {err.message}"
            return [Finding(first.version, "legality", message)], None, False
        expected, verified = self.expected(batch, expected)
        for stored, wanted in zip(batch, expected, strict=False):
            if stored != wanted:
                check = self.mismatch(stored, wanted)
                return [Finding(stored.version, check, differences(stored, wanted))], None, False
        if len(batch) != len(expected):
            return [_count_differs(batch, expected)], None, False
        return [], after, verified
