"""Where every point came from: the score of each seat, line by line, for a player to read."""

from __future__ import annotations

from collections.abc import Sequence

from gameplatform import explanation
from gameplatform.explanation import count_points
from renature import events as e
from renature.components import COLOURS
from renature.evolve import evolve
from renature.state import GameState


class PointLine(explanation.PointLine, frozen=True, kw_only=True):
    """The platform's line, with the turn the points came in."""

    turn: int


class Explanation(explanation.Explanation, frozen=True, kw_only=True):
    """The platform's explanation, with the tiebreak (docs/rules.md) of each seat."""

    lines: list[PointLine]
    tiebreak: list[list[int]] = []


def _describe(event: e.Event, colour: str, points: int, reason: str) -> tuple[str, str]:
    """(rule, sentence) for one award."""
    match event:
        case e.GameStarted():
            return "starting score", f"{colour} starts with {count_points(points)} (seat order)."
        case e.PlantPlaced():
            return (
                "plant points",
                f"{colour} planted a {event.colour} {event.plant} in area {event.area} at "
                f"({event.x}, {event.y}): {points} points ({reason}).",
            )
        case e.AreaScored():
            when = "at the end of the game" if event.final else "when it was closed off"
            totals = ", ".join(f"{c} {t}" for c, t in event.totals.items()) or "no plants"
            cancelled = (
                f"; tied and cancelled: {', '.join(event.cancelled)}" if event.cancelled else ""
            )
            return (
                "area scoring",
                f"Area {event.area} ({event.size} spaces) was scored {when} "
                f"(totals: {totals}{cancelled}): {colour} gets {points} — {reason}.",
            )
        case e.CloudsScored():
            return "clouds", f"{colour} keeps {event.clouds} clouds: +{points}."
        case e.PlantsPenalised():
            left = ", ".join(event.plants) or "none"
            return (
                "plants left",
                f"{colour} still has plants on the player board ({left}): {points}.",
            )
        case e.TokensRevealed():
            backs = ", ".join(str(b) for b in event.backs) or "none"
            return (
                "token backs",
                f"{colour} reveals the backs of the area tokens ({backs}): +{points}.",
            )
    return "points", f"{colour}: {points} ({reason})."


def explain(events: Sequence[e.Event], seat: int | None = None) -> Explanation:
    """Every point of every seat (or of one seat), in the order they were scored."""
    state: GameState | None = None
    totals: list[int] = []
    lines: list[PointLine] = []
    for event in events:
        turn = state.turn if state is not None else 0
        state = evolve(state, event)
        if not totals:
            totals = [0] * state.players
        for who, points, reason in e.points_awarded(event):
            totals[who] += points
            if seat is not None and who != seat:
                continue
            colour = COLOURS[state.seats[who].colour]
            rule, text = _describe(event, colour, points, reason)
            lines.append(
                PointLine(
                    version=event.version,
                    turn=max(turn, 1),
                    seat=who,
                    colour=colour,
                    points=points,
                    total=totals[who],
                    rule=rule,
                    text=text,
                )
            )
    if state is None:
        return Explanation(game_id="", lines=[], scores=[], ranking=[], winners=[], colours=[])
    ended = next((ev for ev in reversed(events) if isinstance(ev, e.GameEnded)), None)
    return Explanation(
        game_id=state.game_id,
        lines=lines,
        scores=[s.score for s in state.seats],
        ranking=list(state.result),
        winners=list(state.winners),
        colours=[COLOURS[s.colour] for s in state.seats],
        names=[s.name or "" for s in state.seats],
        tiebreak=ended.tiebreak if ended else [],
    )
