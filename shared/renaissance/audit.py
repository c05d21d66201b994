"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The platform's audit (`gameplatform.audit`: the hash chain, the versions, every command
re-decided, the final scores against the points awarded, one report shape for every game),
less the seed (Renaissance deals nothing by chance, so there is no commitment to check), and
Renaissance's own check: at the end, the Phase 1 points and Phase 2 penalties of every set
equal a recount from the pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from gameplatform.audit import Auditor, AuditReport, Finding, points_add_up
from gameplatform.sealed import reveal_problem
from renaissance import events as e
from renaissance.figures import extra_points
from renaissance.position import piece_index
from renaissance.rules import RULES
from renaissance.scoring import penalty, phase1_points
from renaissance.state import GameState

__all__ = ["AuditReport", "Finding", "audit", "recount"]


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
    problems = points_add_up(events, state.scores, e.points_awarded)
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


class _Audit(Auditor[GameState, e.Event]):
    """The platform's audit, each set recounted from the pieces at the end."""

    def __init__(self, events: Sequence[e.Event]) -> None:
        super().__init__(
            events,
            rules=RULES,
            created=e.GameCreated,
            scores=lambda state: list(state.scores),
            points_awarded=e.points_awarded,
        )

    def check_start(self, findings: list[Finding]) -> None:
        findings += check_reveals(self.events)

    def recount(self, state: GameState) -> list[str]:
        return recount(self.events, state)

    def checks(self, finished: bool) -> list[str]:
        sealed = any(isinstance(event, e.JankenPlayed) for event in self.events)
        return [
            *(["Janken hands open their commitments"] if sealed else []),
            *(["scores recounted from the pieces"] if finished else []),
        ]


def audit(events: Sequence[e.Event]) -> AuditReport:
    """Audit a whole game from its events; ``ok`` only when every check holds."""
    return _Audit(events).report()
