"""Small reads and writes of a Renaissance position: squares and their coordinates, pieces by
name, the pieces and free squares on the board, tuples with one value changed."""

from __future__ import annotations

from typing import Any

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    EMPTY,
    MONOMINO,
    components,
    mask,
)
from renaissance.errors import (
    InvalidCommand,
)
from renaissance.state import GameState


def at(square: int) -> e.At:
    return e.At(*components().xy(square))


def square_of(cell: c.Square | e.At) -> int:
    return components().square(cell.x, cell.y)


def set_at(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def piece_index(piece_id: str) -> int:
    piece = components().piece(piece_id)
    if piece is None:
        names = ", ".join(p.id for p in components().pieces)
        raise InvalidCommand(f"There is no piece {piece_id!r}; the pieces are {names}.")
    return piece.index


def piece_name(piece: int) -> str:
    return components().pieces[piece].id


def squares_of_piece(state: GameState, piece: int) -> tuple[int, ...]:
    return tuple(sq for sq, p in enumerate(state.cover) if p == piece)


def pieces_on_board(state: GameState) -> list[int]:
    """The polyominoes lying on the board (monominoes are not pieces anyone takes: ruling 2)."""
    return sorted({p for p in state.cover if p >= 0 and p != MONOMINO})


def free_mask(state: GameState) -> int:
    """Squares with neither a piece nor a marker on them."""
    return mask([sq for sq, p in enumerate(state.cover) if p == EMPTY and state.markers[sq] < 0])
