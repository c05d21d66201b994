"""The board and the pieces of Renaissance, read once from ``data/components.toml`` and checked.

Squares are flat indices ``y * width + x`` (x grows right, y grows down; row 0 is the top).
A piece's placement is the tuple of the squares it covers in reading order (by y, then x).
Everything here is immutable and computed once.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

Colour = Literal["silver", "gold"]
COLOURS: tuple[Colour, Colour] = ("silver", "gold")
SILVER, GOLD = 0, 1

EMPTY = -1
"""A square with no piece on it (set-up and Phase 2)."""
CENTRE = -2
"""The blocked centre square: "no pieces can enter"."""
MONOMINO = 99
"""A monomino on a square (monominoes are interchangeable and never owned: ruling 2)."""

Direction = Literal["north", "south", "east", "west"]
STEPS: dict[str, tuple[int, int]] = {
    "north": (0, -1),
    "south": (0, 1),
    "east": (1, 0),
    "west": (-1, 0),
}


class ComponentError(ValueError):
    """The component data breaks what the rule text says."""


@dataclass(frozen=True, slots=True)
class Piece:
    index: int
    id: str
    shape: tuple[tuple[int, int], ...]  # (dx, dy) of its squares as drawn in the data
    tags: tuple[str, ...]
    shape_index: int  # pieces of one shape share it (packing treats them alike)

    @property
    def size(self) -> int:
        return len(self.shape)


@dataclass(frozen=True, slots=True)
class Hand:
    name: str
    needs: tuple[tuple[str, int], ...]
    points: int = 0
    per_piece: int = 0
    counted: str = ""


@dataclass(frozen=True, slots=True)
class Components:
    width: int
    height: int
    blocked: tuple[int, ...]
    markers: int
    monominoes: int
    phase2_monominoes: int
    phase2_markers: int
    pieces: tuple[Piece, ...]
    hands: tuple[Hand, ...]
    shapes: tuple[tuple[tuple[int, int], ...], ...]  # one canonical shape per shape index

    @property
    def squares(self) -> int:
        return self.width * self.height

    def xy(self, square: int) -> tuple[int, int]:
        return square % self.width, square // self.width

    def square(self, x: int, y: int) -> int:
        return y * self.width + x

    def on_board(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def piece(self, piece_id: str) -> Piece | None:
        for piece in self.pieces:
            if piece.id == piece_id:
                return piece
        return None


def _normalised(cells: frozenset[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    min_x = min(x for x, _ in cells)
    min_y = min(y for _, y in cells)
    return tuple(sorted(((x - min_x, y - min_y) for x, y in cells), key=lambda c: (c[1], c[0])))


def orientations(shape: tuple[tuple[int, int], ...]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every distinct way to lay a shape: "Polyominoes can be rotated or flipped"."""
    found: set[tuple[tuple[int, int], ...]] = set()
    cells = frozenset(shape)
    for _ in range(4):
        cells = frozenset((-y, x) for x, y in cells)  # a quarter turn
        found.add(_normalised(cells))
        found.add(_normalised(frozenset((-x, y) for x, y in cells)))  # and flipped
    return tuple(sorted(found))


def _canonical(shape: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    return orientations(shape)[0]


def _connected(cells: tuple[tuple[int, int], ...]) -> bool:
    todo, seen = [cells[0]], {cells[0]}
    while todo:
        x, y = todo.pop()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if n in cells and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(cells)


def _parse_shape(rows: list[str]) -> tuple[tuple[int, int], ...]:
    return tuple((x, y) for y, row in enumerate(rows) for x, ch in enumerate(row) if ch == "#")


def _load() -> dict[str, Any]:
    data = resources.files("renaissance").joinpath("data", "components.toml").read_bytes()
    return tomllib.loads(data.decode())


def parse(data: dict[str, Any]) -> Components:
    """Components from their data, checked against the rule text; raises ComponentError."""
    board, supply = data["board"], data["supply"]
    width, height = int(board["width"]), int(board["height"])
    blocked = tuple(sorted(y * width + x for x, y in board["blocked"]))
    pieces: list[Piece] = []
    shapes: list[tuple[tuple[int, int], ...]] = []
    for index, raw in enumerate(data["pieces"]):
        shape = _parse_shape(raw["shape"])
        if not shape or not _connected(shape):
            raise ComponentError(f"piece {raw['id']}: squares must be joined edge to edge")
        canonical = _canonical(shape)
        if canonical not in shapes:
            shapes.append(canonical)
        pieces.append(Piece(index, raw["id"], shape, tuple(raw["tags"]), shapes.index(canonical)))
    ids = [p.id for p in pieces]
    if len(set(ids)) != len(ids):
        raise ComponentError("piece ids must be unique")
    sizes = sorted(p.size for p in pieces)
    if sizes != [2] * 4 + [3] * 4 + [4] * 5:
        raise ComponentError("the set is 4 dominoes, 4 triominoes and 5 tetrominoes")
    tetrominoes = {_canonical(p.shape) for p in pieces if p.size == 4}
    triominoes = {_canonical(p.shape) for p in pieces if p.size == 3}
    if len(tetrominoes) != 5 or len(triominoes) != 2:
        raise ComponentError("the 5 tetrominoes and the 2 triominoes must all differ")
    hands = tuple(
        Hand(
            name=h["name"],
            needs=tuple(sorted(h["needs"].items())),
            points=int(h.get("points", 0)),
            per_piece=int(h.get("per_piece", 0)),
            counted=h.get("counted", ""),
        )
        for h in data["hands"]
    )
    return Components(
        width=width,
        height=height,
        blocked=blocked,
        markers=int(supply["markers"]),
        monominoes=int(supply["monominoes"]),
        phase2_monominoes=int(supply["phase2_monominoes"]),
        phase2_markers=int(supply["phase2_markers"]),
        pieces=tuple(pieces),
        hands=hands,
        shapes=tuple(shapes),
    )


@cache
def components() -> Components:
    return parse(_load())


@cache
def placements(shape_index: int) -> tuple[tuple[int, ...], ...]:
    """Every placement of a shape on the empty board (rotated or flipped), as square tuples in
    reading order, the blocked centre avoided."""
    comps = components()
    out: set[tuple[int, ...]] = set()
    blocked = set(comps.blocked)
    for cells in orientations(comps.shapes[shape_index]):
        span_x = max(x for x, _ in cells)
        span_y = max(y for _, y in cells)
        for oy in range(comps.height - span_y):
            for ox in range(comps.width - span_x):
                squares = tuple(sorted(comps.square(ox + x, oy + y) for x, y in cells))
                if not blocked.intersection(squares):
                    out.add(squares)
    return tuple(sorted(out))


@cache
def placement_set(shape_index: int) -> frozenset[tuple[int, ...]]:
    return frozenset(placements(shape_index))


def mask(squares: tuple[int, ...] | list[int]) -> int:
    bits = 0
    for square in squares:
        bits |= 1 << square
    return bits


@cache
def neighbours(square: int) -> tuple[int, ...]:
    """Squares sharing a side with ``square`` (the centre included: callers exclude it)."""
    comps = components()
    x, y = comps.xy(square)
    return tuple(
        comps.square(x + dx, y + dy)
        for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1))
        if comps.on_board(x + dx, y + dy)
    )


@cache
def diagonals(square: int) -> tuple[int, ...]:
    comps = components()
    x, y = comps.xy(square)
    return tuple(
        comps.square(x + dx, y + dy)
        for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1))
        if comps.on_board(x + dx, y + dy)
    )


@cache
def around_centre() -> tuple[int, ...]:
    """The 8 squares around the centre: "Markers can be placed at any time" there."""
    comps = components()
    (centre,) = comps.blocked
    return tuple(sorted({*neighbours(centre), *diagonals(centre)}))


def is_outer(square: int) -> bool:
    """On the outmost ring of the board."""
    comps = components()
    x, y = comps.xy(square)
    return x in (0, comps.width - 1) or y in (0, comps.height - 1)


@cache
def ring_neighbours(square: int) -> tuple[int, ...]:
    """The outer squares next to an outer square along the outmost row (rank)."""
    return tuple(n for n in neighbours(square) if is_outer(n)) if is_outer(square) else ()


@cache
def inward(square: int) -> tuple[Direction, ...]:
    """The directions that push a marker on an outer square into the board (two at a corner)."""
    comps = components()
    x, y = comps.xy(square)
    out: list[Direction] = []
    if y == 0:
        out.append("south")
    if y == comps.height - 1:
        out.append("north")
    if x == 0:
        out.append("east")
    if x == comps.width - 1:
        out.append("west")
    return tuple(out)


def step(square: int, direction: str) -> int | None:
    """The square one step away in ``direction``, or None off the board."""
    comps = components()
    x, y = comps.xy(square)
    dx, dy = STEPS[direction]
    if not comps.on_board(x + dx, y + dy):
        return None
    return comps.square(x + dx, y + dy)
