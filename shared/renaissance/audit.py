"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The checks, in order of the stream (as Renature's audit, less the seed: Renaissance deals
nothing by chance, so there is no commitment to check):
- the hash chain: every event's ``prev_hash`` is its predecessor's ``hash`` and its ``hash`` the
  SHA-256 of its canonical bytes (a changed, dropped or reordered event is caught);
- versions run 1, 2, 3, ... without gaps;
- every batch starts with its cause (the recorded command), and re-deciding that command on the
  replayed state gives exactly the stored events (an illegal move is caught here even when its
  forger recomputed the hash chain);
- at the end, every seat's score equals the sum of the points its events award, and the Phase 1
  points and Phase 2 penalties of every set equal a recount from the pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from gameplatform.sealed import reveal_problem
from renaissance import events as e
from renaissance.errors import RuleError
from renaissance.figures import extra_points
from renaissance.rules import execute, penalty, phase1_points, piece_index
from renaissance.state import GameState

CHECK_ORDER = (
    "stream",
    "versions",
    "hash chain",
    "provenance",
    "legality",
    "rules",
    "sealed",
    "scores",
)


class Finding(msgspec.Struct, frozen=True):
    """One thing that does not hold: which event (its version, 1-based), which check, what."""

    version: int
    check: str
    message: str


class AuditReport(msgspec.Struct, frozen=True):
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


def check_chain(events: Sequence[e.Event]) -> list[Finding]:
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
        if event.hash != e.chain_hash(event):
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


def batches(events: Sequence[e.Event]) -> list[list[e.Event]]:
    """Events grouped by the command that caused them (a batch starts with its cause)."""
    out: list[list[e.Event]] = []
    for event in events:
        if event.cause is not None or not out:
            out.append([])
        out[-1].append(event)
    return out


def _differences(stored: e.Event, expected: e.Event) -> str:
    if type(stored) is not type(expected):
        return f"it is a {type(stored).__name__}, the rules give a {type(expected).__name__}"
    ours, theirs = msgspec.to_builtins(stored), msgspec.to_builtins(expected)
    fields = [k for k in theirs if k not in ("hash", "prev_hash") and ours.get(k) != theirs[k]]
    fields = fields or [k for k in theirs if ours.get(k) != theirs[k]]
    shown = "; ".join(f"{k}: stored {ours.get(k)!r}, rules give {theirs[k]!r}" for k in fields)
    return f"{type(stored).__name__} differs from what the rules give ({shown})"


def _redecide(
    state: GameState | None, batch: list[e.Event]
) -> tuple[list[Finding], GameState | None]:
    first = batch[0]
    if first.cause is None:
        return [Finding(first.version, "provenance", "the batch records no command")], None
    command = first.cause.command
    try:
        expected, after = execute(
            state, command, command_id=first.cause.command_id, time=first.cause.time
        )
    except RuleError as err:
        name = type(command).__name__
        return [
            Finding(first.version, "legality", f"the recorded {name} is illegal: {err.message}")
        ], None
    for stored, wanted in zip(batch, expected, strict=False):
        if stored != wanted:
            return [Finding(stored.version, "rules", _differences(stored, wanted))], None
    if len(batch) != len(expected):
        at = (
            batch[len(expected)].version
            if len(batch) > len(expected)
            else expected[len(batch)].version
        )
        return [
            Finding(
                at,
                "rules",
                f"the command gives {len(expected)} events, the stream holds {len(batch)}",
            )
        ], None
    return [], after


def check_reveals(events: Sequence[e.Event]) -> list[Finding]:
    """Every Janken's revealed hands open the commitments shown before (ruling 15)."""
    findings = []
    shown: dict[int, str] = {}
    for event in events:
        if isinstance(event, e.JankenStarted):
            shown = {}
        elif isinstance(event, e.HandShown) and event.seat is not None:
            shown[event.seat] = event.commitment
        elif isinstance(event, e.JankenPlayed):
            for seat, (hand, salt) in enumerate(zip(event.hands, event.salts, strict=False)):
                problem = reveal_problem(shown.get(seat, ""), hand, salt)
                if problem:
                    findings.append(Finding(event.version, "sealed", f"seat {seat}: {problem}"))
    return findings


def recount(events: Sequence[e.Event], state: GameState) -> list[str]:
    """What does not add up: scores against the points awarded, and each set's points against
    the pieces acquired and left unplaced."""
    problems = []
    totals = [0, 0]
    for event in events:
        for seat, points, _ in e.points_awarded(event):
            totals[seat] += points
    for seat in (0, 1):
        if totals[seat] != state.scores[seat]:
            problems.append(
                f"seat {seat}'s points add up to {totals[seat]}, not {state.scores[seat]}"
            )
    acquired: dict[str, list[int]] = {"silver": [], "gold": []}
    unplaced: dict[str, list[int]] = {"silver": [], "gold": []}
    silver_seat = 0
    set_points = [0, 0]
    extra: list[str] = []  # the extra hands of a game of Phase 1 only (ruling 13)
    for event in events:
        if isinstance(event, e.GameCreated) and not isinstance(event.variant, msgspec.UnsetType):
            extra = list(event.variant.extra_hands)
        if isinstance(event, e.SetStarted):
            acquired = {"silver": [], "gold": []}
            silver_seat = event.silver_seat
            set_points = [0, 0]
        elif isinstance(event, e.PieceAcquired):
            acquired[event.colour].append(piece_index(event.piece))
        elif isinstance(event, e.PointsScored) and event.seat is not None:
            set_points[event.seat] += event.points
        elif isinstance(event, e.Phase2Ended):
            unplaced = {
                colour: [piece_index(p) for p in event.unplaced.get(colour, [])]
                for colour in ("silver", "gold")
            }
        elif isinstance(event, e.SetEnded):
            for colour, seat in (("silver", silver_seat), ("gold", 1 - silver_seat)):
                pieces = acquired[colour]
                expected = phase1_points(pieces) + extra_points(pieces, extra)
                expected -= penalty(unplaced[colour])
                if not expected == set_points[seat] == event.scores[seat]:
                    problems.append(
                        f"set {event.set_number}: {colour} (seat {seat}) should score {expected} "
                        f"(pieces, hands and penalties), the points add up to {set_points[seat]} "
                        f"and the set records {event.scores[seat]}"
                    )
    return problems


def audit(events: Sequence[e.Event]) -> AuditReport:
    """Audit a whole game from its events; ``ok`` only when every check holds."""
    game_id = events[0].game_id if events else ""
    if not events:
        finding = Finding(0, "stream", "there are no events")
        return AuditReport(game_id, False, 0, 0, False, [], finding, [finding])
    findings = check_chain(events) + check_reveals(events)
    if not isinstance(events[0], e.GameCreated):
        findings.append(Finding(1, "stream", "the first event is not the game's creation"))
    state: GameState | None = None
    groups = batches(events)
    for batch in groups:
        problems, after = _redecide(state, batch)
        findings += problems
        if problems:
            break  # everything after the first bad batch stands on a false state
        state = after
    if state is not None and state.is_over and not findings:
        findings += [Finding(events[-1].version, "scores", p) for p in recount(events, state)]
    findings.sort(key=lambda f: (f.version, CHECK_ORDER.index(f.check)))
    finished = state is not None and state.is_over
    checks = ["hash chain", "versions", "every command re-decided"]
    if any(isinstance(event, e.JankenPlayed) for event in events):
        checks.append("Janken hands open their commitments")
    if finished:
        checks.append("scores recounted from the pieces")
    good = state is not None and not findings
    return AuditReport(
        game_id=game_id,
        ok=not findings,
        events=len(events),
        batches=len(groups),
        finished=finished,
        checks=checks,
        first_bad=findings[0] if findings else None,
        findings=findings,
        scores=list(state.scores) if good and state is not None else [],
        winners=list(state.winners) if good and state is not None else [],
    )
