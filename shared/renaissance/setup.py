"""The set-up: the players arrange the polyominoes in turn; when the pieces left do not fit, a
piece is taken from the board and the rest relocated (ruling 4)."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    COLOURS,
    EMPTY,
    mask,
)
from renaissance.errors import (
    PieceDoesNotFit,
    RelocationRule,
)
from renaissance.packing import can_pack, shape_counts
from renaissance.placement import fits_somewhere, pieces_fit
from renaissance.position import (
    at,
    free_mask,
    piece_index,
    piece_name,
    pieces_on_board,
    squares_of_piece,
)
from renaissance.turns import Batch, check_turn, free_piece_squares


def place_in_setup(b: Batch, cmd: c.PlacePiece, piece: int) -> None:
    """A polyomino of the pool arranged on the board; during the relocation only where the
    pieces after it still fit (ruling 4)."""
    s = b.state
    if piece not in s.pool:
        raise PieceDoesNotFit(f"{cmd.piece} is on the board already.")
    if piece in s.lifted:
        raise RelocationRule(
            "Polyominoes that are taken from the board cannot be placed back on the board "
            "in the same turn."
        )
    squares = free_piece_squares(s, cmd, piece)
    rest = tuple(p for p in s.pool if p != piece)
    if s.adjusting and not pieces_fit(s, rest, squares):
        raise RelocationRule(
            "Placed there, the pieces left would no longer all fit: relocate so that all "
            "the pieces fit in."
        )
    b.emit(
        e.PiecePlaced,
        seat=cmd.seat,
        piece=cmd.piece,
        squares=[at(sq) for sq in squares],
        colour=COLOURS[s.colour_of(cmd.seat)],
        stage="setup",
    )
    _after_setup_placement(b, cmd.seat)


def _after_setup_placement(b: Batch, seat: int) -> None:
    s = b.state
    if not s.pool:
        monominoes = [at(sq) for sq, p in enumerate(s.cover) if p == EMPTY]
        b.emit(e.SetupCompleted, monominoes=monominoes, first_seat=s.gold_seat)
        return
    b.emit(e.TurnEnded, next_seat=1 - seat)
    s = b.state
    if not s.adjusting and not fits_somewhere(s, s.pool):
        b.emit(
            e.RelocationRequired,
            seat=s.current,
            pieces_left=[piece_name(p) for p in s.pool],
        )


def lift(b: Batch, cmd: c.LiftPiece) -> None:
    s = b.state
    if s.phase == "setup" and cmd.seat == s.current:
        raise RelocationRule(
            "A polyomino is taken from the board only when some pieces left do not fit in."
        )
    check_turn(s, cmd.seat, "setup_lift")
    piece = piece_index(cmd.piece)
    if piece not in pieces_on_board(s):
        raise RelocationRule(f"{cmd.piece} is not on the board.")
    if piece in s.protected:
        raise RelocationRule(
            "The Polyomino placed on the board right after another one was taken cannot be "
            "taken from the board."
        )
    squares = squares_of_piece(s, piece)
    pool = (*s.pool, piece)
    still = not can_pack(free_mask(s) | mask(squares), shape_counts(pool))
    b.emit(
        e.PieceLifted,
        seat=cmd.seat,
        piece=cmd.piece,
        squares=[at(sq) for sq in squares],
        still_blocked=still,
    )
