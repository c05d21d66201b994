"""What the position allows: where a polyomino fits (the set-up, its relocation, Phase 2),
where a marker may be placed, pushed in or moved, the squares of the Phase 2 preparation, and
which polyominoes are fully occupied.

Quotes are from the English rule text; "ruling N" points at docs/rules-renaissance.md."""

from __future__ import annotations

from collections.abc import Iterator

from renaissance.components import (
    CENTRE,
    EMPTY,
    MONOMINO,
    Direction,
    around_centre,
    components,
    diagonals,
    inward,
    is_outer,
    mask,
    neighbours,
    placements,
    ring_neighbours,
    step,
)
from renaissance.packing import can_pack, shape_counts
from renaissance.position import free_mask, pieces_on_board
from renaissance.state import GameState


def free_placements(state: GameState, piece: int) -> Iterator[tuple[int, ...]]:
    """Placements of ``piece`` on squares with no piece and no marker."""
    free = free_mask(state)
    for squares in placements(components().pieces[piece].shape_index):
        if mask(squares) & free == mask(squares):
            yield squares


def fits_somewhere(state: GameState, pieces: tuple[int, ...]) -> bool:
    return any(next(free_placements(state, p), None) is not None for p in pieces)


def pieces_fit(state: GameState, pieces: tuple[int, ...], taken: tuple[int, ...] = ()) -> bool:
    """Can all ``pieces`` still be laid on the free squares, ``taken`` squares aside?"""
    return can_pack(free_mask(state) & ~mask(taken), shape_counts(pieces))


def setup_placements(state: GameState) -> list[tuple[int, tuple[int, ...]]]:
    """(piece, squares) the seat to move may place in the set-up. During the relocation every
    placement must leave the pieces after it room to fit (ruling 4)."""
    out = []
    for piece in state.pool:
        if piece in state.lifted:
            continue
        rest = tuple(p for p in state.pool if p != piece)
        for squares in free_placements(state, piece):
            if not state.adjusting or pieces_fit(state, rest, squares):
                out.append((piece, squares))
    return out


def liftable(state: GameState) -> list[int]:
    return [p for p in pieces_on_board(state) if p not in state.protected]


def may_place_marker_on(state: GameState, colour: int, square: int) -> bool:
    """The "Instructions in placing Markers" for a free square (supply aside)."""
    if square in around_centre():
        return True
    own = state.markers
    if any(own[d] == colour for d in diagonals(square)):
        return True
    return any(own[n] == colour for n in ring_neighbours(square))


def marker_squares(state: GameState, colour: int) -> list[int]:
    if state.supply[colour] <= 0:
        return []
    return [
        sq
        for sq, p in enumerate(state.cover)
        if p != CENTRE and state.markers[sq] < 0 and may_place_marker_on(state, colour, sq)
    ]


def push_run(state: GameState, square: int, direction: str) -> list[int] | None:
    """The markers a push-in at ``square`` moves (from ``square`` on), or None when it would push
    one off the board or into the centre."""
    run = []
    at_square: int | None = square
    while at_square is not None and state.markers[at_square] >= 0:
        run.append(at_square)
        at_square = step(at_square, direction)
    if at_square is None or state.cover[at_square] == CENTRE:
        return None
    return run


def may_push_at(state: GameState, colour: int, square: int) -> bool:
    """Push-in at one's own marker on the outer ring, or at the outer squares next to it."""
    if not is_outer(square) or state.markers[square] < 0:
        return False
    if state.markers[square] == colour:
        return True
    return any(state.markers[n] == colour for n in ring_neighbours(square))


def pushes(state: GameState, colour: int) -> list[tuple[int, Direction]]:
    if state.supply[colour] <= 0:
        return []
    return [
        (sq, direction)
        for sq in range(len(state.markers))
        if may_push_at(state, colour, sq)
        for direction in inward(sq)
        if push_run(state, sq, direction) is not None
    ]


def can_place_marker(state: GameState, seat: int) -> bool:
    colour = state.colour_of(seat)
    return bool(marker_squares(state, colour) or pushes(state, colour))


def phase2_placements(state: GameState, colour: int) -> list[tuple[int, tuple[int, ...]]]:
    """(piece, squares): "placed on squares which have at least one common adjacent sides with
    the squares where his/her own Markers are placed"."""
    own = {sq for sq, m in enumerate(state.markers) if m == colour}
    beside = {n for sq in own for n in neighbours(sq)}
    out = []
    for piece in sorted(set(state.hands[colour])):
        for squares in free_placements(state, piece):
            if beside.intersection(squares):
                out.append((piece, squares))
    return out


def can_place_piece(state: GameState, seat: int) -> bool:
    return bool(phase2_placements(state, state.colour_of(seat)))


def marker_moves(state: GameState) -> list[tuple[int, int]]:
    """Every marker step: one square across a side onto a free square, and not back to where the
    same marker stood the turn before ("Undo" cannot be done)."""
    out = []
    for origin, colour in enumerate(state.markers):
        if colour < 0:
            continue
        for target in neighbours(origin):
            if state.cover[target] != EMPTY or state.markers[target] >= 0:
                continue
            if state.last_move == (target, origin):
                continue
            out.append((origin, target))
    return out


def preparation_squares(state: GameState) -> list[int]:
    """Free squares sharing no side with a marker or monomino (fig17)."""
    return [
        sq
        for sq, p in enumerate(state.cover)
        if p == EMPTY
        and state.markers[sq] < 0
        and not any(state.markers[n] >= 0 or state.cover[n] == MONOMINO for n in neighbours(sq))
    ]


def covered_pieces(state: GameState) -> list[tuple[int, int, int]]:
    """(piece, silver, gold) for every polyomino fully occupied with markers."""
    marks: dict[int, list[int]] = {}
    for square, piece in enumerate(state.cover):
        if piece >= 0 and piece != MONOMINO:
            marks.setdefault(piece, []).append(state.markers[square])
    return [
        (piece, found.count(0), found.count(1))
        for piece, found in sorted(marks.items())
        if -1 not in found
    ]
