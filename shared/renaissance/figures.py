"""Extra hands for *Play only Phase 1* (ruling 13): figures laid with several of one's pieces.

"For Phase1 independent game, it should be interesting to add extra hands. For example, you can
add scores for the hands for certain "words" or "diagrams" (such as rectangles or diagrams with
a hole in the middle...) that can be created with multiple Polyominoes." The players pick them
by name at creation:

- ``rectangle``: 2 to 4 of your polyominoes that together fill a rectangle at least 2 squares
  wide each way: 1 point for each piece of the largest such rectangle (2 to 4 points);
- ``ring``: 2 to 4 of your polyominoes that together lay the 8 squares around a hole (a 3x3
  square without its middle): 3 points.

Pieces may be rotated or flipped, as everywhere in the game; a piece may serve both hands.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations

from renaissance.components import components, orientations

Cell = tuple[int, int]
EXTRA_HANDS = ("rectangle", "ring")
RING_POINTS = 3
FEWEST, MOST = 2, 4
"""A figure takes several polyominoes ("multiple"), at most 4 (a small diagram)."""


def _rectangle(width: int, height: int) -> frozenset[Cell]:
    return frozenset((x, y) for y in range(height) for x in range(width))


RING = _rectangle(3, 3) - {(1, 1)}


@cache
def _laid(shape: int) -> tuple[tuple[Cell, ...], ...]:
    """Every orientation of a shape, each starting from its first square in reading order."""
    return orientations(components().shapes[shape])


@cache
def can_tile(figure: frozenset[Cell], shapes: tuple[int, ...]) -> bool:
    """Do the pieces of ``shapes`` (shape indices, sorted) cover ``figure`` exactly?"""
    if not shapes:
        return not figure
    x0, y0 = min(figure, key=lambda cell: (cell[1], cell[0]))
    for shape in sorted(set(shapes)):
        rest = list(shapes)
        rest.remove(shape)
        for laid in _laid(shape):
            ax, ay = laid[0]
            cells = {(x0 + x - ax, y0 + y - ay) for x, y in laid}
            if cells <= figure and can_tile(figure - cells, tuple(rest)):
                return True
    return False


def _groups(pieces: Sequence[int]) -> set[tuple[int, ...]]:
    """Every choice of 2 to 4 of the pieces, as sorted shape indices (alike pieces once)."""
    shapes = sorted(components().pieces[p].shape_index for p in pieces)
    return {group for count in range(FEWEST, MOST + 1) for group in combinations(shapes, count)}


def _area(group: tuple[int, ...]) -> int:
    return sum(len(components().shapes[shape]) for shape in group)


def rectangle_pieces(pieces: Sequence[int]) -> int:
    """The most pieces (2 to 4) that fill a rectangle at least 2 by 2; 0 when none do."""
    best = 0
    for group in _groups(pieces):
        area = _area(group)
        sides = [(w, area // w) for w in range(2, area) if area % w == 0 and area // w >= w]
        if len(group) > best and any(can_tile(_rectangle(w, h), group) for w, h in sides):
            best = len(group)
    return best


def makes_ring(pieces: Sequence[int]) -> bool:
    return any(_area(g) == len(RING) and can_tile(RING, g) for g in _groups(pieces))


def extra_hands_made(pieces: Sequence[int], chosen: Sequence[str]) -> list[tuple[str, int]]:
    """(hand, points) for each chosen extra hand the pieces make."""
    out = []
    if "rectangle" in chosen and (count := rectangle_pieces(pieces)):
        out.append(("rectangle", count))
    if "ring" in chosen and makes_ring(pieces):
        out.append(("ring", RING_POINTS))
    return out


def extra_points(pieces: Sequence[int], chosen: Sequence[str]) -> int:
    return sum(points for _, points in extra_hands_made(pieces, chosen))
