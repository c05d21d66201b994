"""Where every point came from: each seat's score, pot by pot, for a player to read."""

from __future__ import annotations

from collections.abc import Sequence

from gameplatform import explanation
from goofspiel import events as e
from goofspiel.view import COLOURS
from goofspiel.words import describe

SEAT_EVENTS = (e.PlayerResigned, e.SeatTimedOut, e.SeatReclaimed, e.GameCancelled)
"""Events that change who plays a seat, or end the game without its prizes: told as notes."""


class PointLine(explanation.PointLine, frozen=True, kw_only=True):
    """Points one seat took with one bid: the turn, the bids and the pot."""

    turn: int
    bids: list[int]
    pot: list[int]


class Explanation(explanation.Explanation, frozen=True, kw_only=True):
    lines: list[PointLine]
    discarded: list[int] = []
    """Prizes nobody took (tied bids)."""
    notes: list[str] = []
    """What happened to the seats, in words (a resignation, a timeout, a seat taken back)."""


def _text(event: e.BidsRevealed, seat: int) -> str:
    other = 1 - seat
    pot = " + ".join(str(card) for card in event.pot)
    return (
        f"turn {event.turn}: {COLOURS[seat]} bid {event.bids[seat]} against "
        f"{event.bids[other]} and took the prize {pot}: +{event.points}."
    )


def _line(event: e.BidsRevealed, winner: int, total: int) -> PointLine:
    return PointLine(
        version=event.version,
        turn=event.turn,
        seat=winner,
        colour=COLOURS[winner],
        points=event.points,
        total=total,
        bids=list(event.bids),
        pot=list(event.pot),
        rule="prize",
        text=_text(event, winner),
    )


def explain(events: Sequence[e.Event], seat: int | None = None) -> Explanation:
    """Every point of every seat (or of one seat), in the order they were scored."""
    totals = [0, 0]
    lines = []
    discarded: list[int] = []
    ended: e.GameEnded | None = None
    names = ["", ""]
    notes = []
    for event in events:
        if isinstance(event, SEAT_EVENTS):
            notes.append(f"Event {event.version}: {describe(event, COLOURS)}")
        if isinstance(event, e.PlayerJoined) and event.seat is not None:
            names[event.seat] = event.name
        if isinstance(event, e.GameEnded):
            ended = event
        if not isinstance(event, e.BidsRevealed):
            continue
        if event.discarded:
            discarded += event.pot
        if event.winner is None:
            continue
        totals[event.winner] += event.points
        if seat in (None, event.winner):
            lines.append(_line(event, event.winner, totals[event.winner]))
    ranking, winners = (list(ended.ranking), list(ended.winners)) if ended else ([], [])
    game_id = events[0].game_id if events else ""
    return Explanation(
        game_id=game_id,
        lines=lines,
        scores=totals,
        ranking=ranking,
        winners=winners,
        colours=list(COLOURS),
        names=names,
        discarded=discarded,
        notes=notes,
    )
