"""The sets of a game: a set begins (the set-up, or the first Janken in a game of Phase 2 only),
Phase 1 and Phase 2 end with their scoring, the set ends, then the next set or the game's end
(rulings 12, 13)."""

from __future__ import annotations

import msgspec

from renaissance import events as e
from renaissance.components import (
    COLOURS,
    components,
)
from renaissance.figures import extra_hands_made
from renaissance.janken import call_janken
from renaissance.position import piece_name, pieces_on_board
from renaissance.scoring import hands_made, penalty
from renaissance.turns import Batch


def begin_set(b: Batch, number: int, silver: int) -> None:
    """A new set: the set-up, or in a game of Phase 2 only the first Janken (ruling 14)."""
    b.emit(e.SetStarted, set_number=number, silver_seat=silver, gold_seat=1 - silver)
    if b.state.play == "phase2":
        call_janken(b)


def end_phase1(b: Batch, reason: str) -> None:
    s = b.state
    left = [piece_name(p) for p in pieces_on_board(s)]
    b.emit(e.Phase1Ended, reason=reason, removed=left)
    for colour in (1, 0):  # Gold first, as in the turns
        seat = b.state.seat_of(colour)
        pieces = b.state.acquired[colour]
        names = ", ".join(piece_name(p) for p in pieces) or "none"
        b.emit(
            e.PointsScored,
            seat=seat,
            colour=COLOURS[colour],
            points=len(pieces),
            rule="polyominoes",
            detail=f"1 point for each polyomino acquired ({names})",
            phase=1,
        )
        extra = extra_hands_made(pieces, b.state.extra_hands)
        for hand, points in [*hands_made(pieces), *extra]:
            b.emit(
                e.PointsScored,
                seat=seat,
                colour=COLOURS[colour],
                points=points,
                rule=hand,
                detail=f"the hand {hand}",
                phase=1,
            )
    if b.state.play == "phase1":
        _end_set(b)  # ruling 13: the set is Phase 1 alone


def end_phase2(b: Batch, by: str | None = None) -> None:
    s = b.state
    b.emit(
        e.Phase2Ended,
        unplaced={COLOURS[col]: [piece_name(p) for p in s.hands[col]] for col in (1, 0)},
        by=msgspec.UNSET if by is None else by,
    )
    comps = components()
    for colour in (1, 0):
        left = s.hands[colour]
        if not left:
            continue
        detail = ", ".join(f"{piece_name(p)} {comps.pieces[p].size}" for p in left)
        b.emit(
            e.PointsScored,
            seat=s.seat_of(colour),
            colour=COLOURS[colour],
            points=-penalty(left),
            rule="unplaced pieces",
            detail=f"penalty for each piece left unplaced, 1 per square ({detail})",
            phase=2,
        )
    _end_set(b)


def _end_set(b: Batch) -> None:
    """The set's result; then the next set, or the game's end."""
    s = b.state
    points = list(s.set_points)
    best = max(points)
    b.emit(
        e.SetEnded,
        set_number=s.set_number,
        scores=points,
        winners=[seat for seat in (0, 1) if points[seat] == best],
    )
    s = b.state
    if s.set_number < s.sets:
        begin_set(b, s.set_number + 1, 1 - s.silver_seat)  # ruling 12: colours change
        return
    keys = list(s.scores) if s.competition == "points" else list(s.sets_won)
    ranking = sorted((0, 1), key=lambda seat: -keys[seat])
    b.emit(
        e.GameEnded,
        scores=list(s.scores),
        sets_won=list(s.sets_won),
        competition=s.competition,
        ranking=ranking,
        winners=[seat for seat in (0, 1) if keys[seat] == max(keys)],
    )
