"""Where a piece may go: dominoes on the brook (animals beside each other match, one half
anchored), plants beside this turn's domino, Valley mushrooms beside an area.

Rule references point at the English online rules ("A:", "B:") and the rulings page
(``ruling N``)."""

from __future__ import annotations

from renature.board import PATH
from renature.components import components
from renature.geometry import geometry
from renature.state import GameState

ALL_ANIMALS = (1 << 10) - 1


def is_free_path(state: GameState, cell: int) -> bool:
    return state.board.kinds[cell] == PATH and state.cover[cell] < 0 and state.area_of[cell] < 0


def allowed_animals(state: GameState, cell: int) -> tuple[int, bool]:
    """Bit mask of the animals that may lie on a free cell, and whether it is anchored.

    Every animal beside the cell must match: same animal, or either is the joker (ruling 1).
    Anchored: on a starting space, or beside at least one animal.
    """
    cover = state.cover
    neighbours = [cover[n] for n in state.board.neighbours[cell] if cover[n] >= 0]
    anchored = bool(neighbours) or cell in state.board.starts
    others = {a for a in neighbours if a != state.joker}
    if not others:
        return ALL_ANIMALS, anchored
    if len(others) == 1:
        return (1 << others.pop()) | (1 << state.joker), anchored
    return 1 << state.joker, anchored


def legal_placements(state: GameState, hand: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Every (domino, first cell, second cell) placement for the dominoes of ``hand``."""
    board = state.board
    cover, kinds, area_of, neighbours = state.cover, board.kinds, state.area_of, board.neighbours

    def free(cell: int) -> bool:
        return kinds[cell] == PATH and cover[cell] < 0 and area_of[cell] < 0

    # Anchored free cells: a starting space, or beside an animal.
    anchors = {cell for cell in board.starts if free(cell)}
    for _, p, q in state.dominoes:
        for cell in (p, q):
            anchors.update(n for n in neighbours[cell] if free(n))
    masks: dict[int, tuple[int, bool]] = {}
    edges: set[tuple[int, int]] = set()
    for cell in anchors:
        for n in neighbours[cell]:
            if free(n):
                edges.add((min(cell, n), max(cell, n)))
    for edge in edges:
        for cell in edge:
            if cell not in masks:
                masks[cell] = allowed_animals(state, cell)
    dominoes = components().dominoes
    out: list[tuple[int, int, int]] = []
    for domino in sorted(set(hand)):
        a, b = dominoes[domino]
        bit_a, bit_b = 1 << a, 1 << b
        for p, q in sorted(edges):
            mask_p, _ = masks[p]
            mask_q, _ = masks[q]
            if mask_p & bit_a and mask_q & bit_b:
                out.append((domino, p, q))
            if mask_q & bit_a and mask_p & bit_b:
                out.append((domino, q, p))
    return out


def mushroom_spaces(s: GameState) -> list[int]:
    board = s.board
    return [
        cell
        for cell in geometry(board.id).path
        if is_free_path(s, cell) and any(s.area_of[n] >= 0 for n in board.neighbours[cell])
    ]


def plant_spots(s: GameState) -> list[int]:
    """Free area spaces beside the domino placed this turn (step B)."""
    neighbours = s.board.neighbours
    spots = {
        n for cell in s.placed for n in neighbours[cell] if s.area_of[n] >= 0 and s.plants[n] < 0
    }
    return sorted(spots)
