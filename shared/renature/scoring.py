"""Scoring: a plant's points (step C 1, ruling 5), an area's majorities and awards (ruling 7),
and the tie-break keys of the end of the game."""

from __future__ import annotations

from renature import events as e
from renature.areas import area_cells, live_areas
from renature.components import COLOURS, NEUTRAL, plant_colour, plant_value
from renature.position import seat_of_colour
from renature.state import GameState


def plant_points(state: GameState, cell: int, code: int) -> tuple[int, int]:
    """Points for a plant placed on ``cell``: 1 for itself and 1 for every other plant of any
    colour in that area with equal or lower value (step C 1, ruling 5). Returns (points, count)."""
    value = plant_value(code)
    plants = state.plants
    counted = sum(
        1
        for other in area_cells(state, state.area_of[cell])
        if other != cell and plants[other] >= 0 and plant_value(plants[other]) <= value
    )
    return 1 + counted, counted


def colour_totals(state: GameState, area: int) -> list[int]:
    totals = [0] * len(COLOURS)
    plants = state.plants
    for cell in area_cells(state, area):
        if plants[cell] >= 0:
            totals[plant_colour(plants[cell])] += plant_value(plants[cell])
    return totals


def majority_ranks(totals: list[int]) -> tuple[list[int], list[tuple[int, str]]]:
    """Who ranks in an area scoring (ruling 7), by colour: colours whose totals tie cancel;
    a sole remaining colour ranks ``sole`` (main + minor), otherwise the highest ``main`` and
    the second ``minor``. Returns (cancelled colours, [(colour, rank)]). Neutral still takes
    its rank here; it is the caller who gives a neutral rank no points."""
    present = [(t, colour) for colour, t in enumerate(totals) if t > 0]
    if not present:
        return [], []
    values = [t for t, _ in present]  # at most five: counting beats a Counter here
    cancelled = [col for t, col in present if values.count(t) > 1]
    remaining = sorted(((t, col) for t, col in present if values.count(t) == 1), reverse=True)
    if len(remaining) == 1:
        return cancelled, [(remaining[0][1], "sole")]
    return cancelled, [
        (col, rank) for (_, col), rank in zip(remaining, ("main", "minor"), strict=False)
    ]


RANK_REASONS = {
    "sole": "sole colour: main + minor points",
    "main": "highest total: main points",
    "minor": "second-highest total: minor points",
}


def rank_points(rank: str, main: int, minor: int) -> int:
    return {"sole": main + minor, "main": main, "minor": minor}[rank]


def area_awards(
    state: GameState, area: int, main: int, minor: int
) -> tuple[dict[str, int], list[str], list[e.Award]]:
    """Area scoring (ruling 7) of an area now: (totals by colour, cancelled colours, awards)."""
    totals = colour_totals(state, area)
    cancelled, ranks = majority_ranks(totals)
    area_id = state.board.area_ids[area]
    awards = []
    for colour, rank in ranks:
        seat = seat_of_colour(state, colour)
        if seat is not None and colour != NEUTRAL:
            points = rank_points(rank, main, minor)
            reason = f"{RANK_REASONS[rank]} in area {area_id}"
            awards.append(e.Award(seat, COLOURS[colour], points, reason))
    named = {COLOURS[col]: t for col, t in enumerate(totals) if t > 0}
    return named, [COLOURS[col] for col in cancelled], awards


def tiebreak_keys(s: GameState) -> list[list[int]]:
    """Per seat, what breaks a tie in points (higher first).

    Base game: the number of area tokens. Valley, "the player with the majority in the
    largest area": per area size, largest first, the number of areas of that size where the
    seat's colour holds the majority, i.e. ranks first once tied totals have cancelled (ruling
    7). So the seat holding the majority in the largest area wins the tie; where none of the
    tied seats holds it, the next largest decides, and so on. Areas of one size count alike,
    whatever their place on the board."""
    if s.board.tokens:
        return [[len(seat.tokens)] for seat in s.seats]
    seat_of = {seat.colour: number for number, seat in enumerate(s.seats)}
    held: dict[int, list[int]] = {}
    for area in live_areas(s):
        counts = held.setdefault(s.area_sizes[area], [0] * s.players)
        _, ranks = majority_ranks(colour_totals(s, area))
        if ranks and ranks[0][0] in seat_of:
            counts[seat_of[ranks[0][0]]] += 1
    sizes = sorted(held, reverse=True)
    return [[held[size][seat] for size in sizes] for seat in range(s.players)]
