"""Where every point came from, in one shape for every game: a line per award (which event, which
seat, how many points, the running total, the rule and a sentence), then the scores, ranking and
winners, each seat named by its colour and its player's name (never "seat 0").

A game's explanation subclasses these with what it adds (Renature: the turn and the tiebreak;
Renaissance: the set, the phase and the sets won)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec


class PointLine(msgspec.Struct, frozen=True, kw_only=True):
    """Points one seat got from one event: by which rule, and the running total."""

    version: int
    seat: int
    colour: str
    points: int
    total: int
    rule: str
    text: str


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """Every point of every seat (or of one seat), in the order they were scored.
    ``colours[s]`` and ``names[s]`` name seat s."""

    game_id: str
    lines: Sequence[PointLine]
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]
    names: list[str] = []


def count_points(points: int) -> str:
    """``1 point``, ``-1 point``, ``0 points``, ``12 points``."""
    return f"{points} point" if abs(points) == 1 else f"{points} points"


def seat_name(explanation: Explanation, seat: int) -> str:
    """A seat as a player reads it: its colour, and its player's name where it has one."""
    colour = explanation.colours[seat] if seat < len(explanation.colours) else f"seat {seat}"
    name = explanation.names[seat] if seat < len(explanation.names) else ""
    return f"{colour} ({name})" if name and name != colour else colour


def standings(explanation: Explanation) -> list[str]:
    """The final ranking in words: ``1. green (Ann): 52 points (winner)``, a line a seat."""
    return [
        f"{rank}. {seat_name(explanation, seat)}: {count_points(explanation.scores[seat])}"
        + (" (winner)" if seat in explanation.winners else "")
        for rank, seat in enumerate(explanation.ranking, start=1)
    ]
