"""Board geometry the tests ask about."""

from __future__ import annotations

from renature.board import Board
from renature.state import GameState


def areas_beside(where: Board | GameState, cell: int) -> set[int]:
    """The areas next to ``cell``: of the printed board, or of a game (where Valley mushrooms
    have joined areas and made new area spaces)."""
    board = where.board if isinstance(where, GameState) else where
    return {where.area_of[n] for n in board.neighbours[cell] if where.area_of[n] >= 0}
