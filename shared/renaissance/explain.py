"""Where every point came from: each seat's score, line by line, for a player to read."""

from __future__ import annotations

from collections.abc import Sequence

from gameplatform import explanation
from renaissance import events as e


class PointLine(explanation.PointLine, frozen=True, kw_only=True):
    """The platform's line, with the set and the phase the points came in."""

    set_number: int
    phase: int


class Explanation(explanation.Explanation, frozen=True, kw_only=True):
    """The platform's explanation, with each set's scores, the sets won and the competition."""

    lines: list[PointLine]
    set_scores: list[list[int]] = []
    sets_won: list[int] = []
    competition: str = "points"


def _text(event: e.PointsScored) -> str:
    if event.phase == 2:
        return f"{event.colour} left pieces unplaced in Phase 2: {event.points} ({event.detail})."
    if event.rule == "polyominoes":
        return f"{event.colour}: {event.detail}: +{event.points}."
    return f"{event.colour} holds the hand {event.rule}: +{event.points}."


def explain(events: Sequence[e.Event], seat: int | None = None) -> Explanation:
    """Every point of every seat (or of one seat), in the order they were scored."""
    totals = [0, 0]
    lines = []
    set_number = 0
    colours = ["silver", "gold"]
    set_scores: list[list[int]] = []
    names = ["", ""]
    ended: e.GameEnded | None = None
    for event in events:
        if isinstance(event, e.PlayerJoined) and event.seat in (0, 1):
            names[event.seat] = event.name
        elif isinstance(event, e.SetStarted):
            set_number = event.set_number
            colours = ["silver", "gold"] if event.silver_seat == 0 else ["gold", "silver"]
        elif isinstance(event, e.SetEnded):
            set_scores.append(list(event.scores))
        elif isinstance(event, e.GameEnded):
            ended = event
        elif isinstance(event, e.PointsScored) and event.seat is not None:
            totals[event.seat] += event.points
            if seat is None or seat == event.seat:
                lines.append(
                    PointLine(
                        version=event.version,
                        set_number=set_number,
                        phase=event.phase,
                        seat=event.seat,
                        colour=event.colour,
                        points=event.points,
                        total=totals[event.seat],
                        rule=event.rule,
                        text=_text(event),
                    )
                )
    return Explanation(
        game_id=events[0].game_id if events else "",
        lines=lines,
        scores=totals,
        ranking=list(ended.ranking) if ended else [],
        winners=list(ended.winners) if ended else [],
        colours=colours,
        names=names,
        set_scores=set_scores,
        sets_won=list(ended.sets_won) if ended else [],
        competition=ended.competition if ended else "points",
    )
