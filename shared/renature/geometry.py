"""Static facts derived once per board: borders of areas, which areas a cell can close."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from renature.board import AREA, PATH, load_board


@dataclass(frozen=True, slots=True)
class Geometry:
    path: frozenset[int]
    area_cells: tuple[tuple[int, ...], ...]
    # Path cells orthogonally beside each area (the spaces that must be covered or isolated).
    area_border: tuple[tuple[int, ...], ...]
    # For a path cell: the areas whose border it or one of its path neighbours lies on. Covering
    # the cell can only close these areas (it covers the cell, or isolates a neighbour).
    closable_by: dict[int, tuple[int, ...]]
    # Area cells beside each path cell (where a plant may go after covering it).
    plant_spots: dict[int, tuple[int, ...]]


@cache
def geometry(board_id: str) -> Geometry:
    board = load_board(board_id)
    path = frozenset(c for c in board.cells if board.kinds[c] == PATH)
    areas = range(len(board.area_ids))
    area_cells = tuple(tuple(board.area_cells(a)) for a in areas)
    border = tuple(
        tuple(sorted({n for c in cells for n in board.neighbours[c] if n in path}))
        for cells in area_cells
    )
    touching: dict[int, set[int]] = {c: set() for c in path}
    for area, cells in enumerate(border):
        for cell in cells:
            touching[cell].add(area)
    closable = {
        c: tuple(
            sorted(touching[c].union(*(touching[n] for n in board.neighbours[c] if n in path)))
        )
        for c in path
    }
    spots = {c: tuple(n for n in board.neighbours[c] if board.kinds[n] == AREA) for c in path}
    return Geometry(path, area_cells, border, closable, spots)
