"""Phase 2: the preparation (a monomino and 3 markers each), then polyominoes placed from the
hand beside one's markers, a marker moved after each, until no piece in hand can be placed."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    CENTRE,
    COLOURS,
    EMPTY,
    neighbours,
)
from renaissance.errors import (
    IllegalMove,
    IllegalPreparation,
    PieceDoesNotFit,
)
from renaissance.placement import can_place_piece, marker_moves, preparation_squares
from renaissance.position import at
from renaissance.sets import end_phase2
from renaissance.state import GameState
from renaissance.turns import Batch, board_square, check_turn, free_piece_squares


def place_in_phase2(b: Batch, cmd: c.PlacePiece, piece: int) -> None:
    """A polyomino from the hand placed beside one of the seat's own markers; then a marker
    moves, or the turn passes when none can."""
    s = b.state
    colour = s.colour_of(cmd.seat)
    if piece not in s.hands[colour]:
        raise PieceDoesNotFit(f"{cmd.piece} is not one of your pieces in hand.")
    squares = free_piece_squares(s, cmd, piece)
    own = {sq for sq, m in enumerate(s.markers) if m == colour}
    if not any(n in own for sq in squares for n in neighbours(sq)):
        raise PieceDoesNotFit(
            "Polyominoes must be placed on squares which share a side with a square where one "
            "of your own Markers is."
        )
    b.emit(
        e.PiecePlaced,
        seat=cmd.seat,
        piece=cmd.piece,
        squares=[at(sq) for sq in squares],
        colour=COLOURS[colour],
        stage="phase2",
    )
    if not marker_moves(b.state):
        b.emit(e.MarkerMoveSkipped, seat=cmd.seat)
        end_phase2_turn(b, cmd.seat)


def prepare_marker(b: Batch, cmd: c.PlaceMarker) -> None:
    """One of the seat's 3 markers of the Phase 2 preparation."""
    s = b.state
    colour = s.colour_of(cmd.seat)
    if s.to_prepare[colour][1] <= 0:
        raise IllegalPreparation("You have placed your 3 markers already.")
    _preparation_square(s, cmd.square)
    b.emit(
        e.MarkerPlaced,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
        stage="phase2_preparation",
    )
    _after_preparation(b, cmd.seat)


def _preparation_square(s: GameState, cell: c.Square) -> int:
    square = board_square(cell, IllegalPreparation, "it")
    if s.cover[square] == CENTRE:
        raise IllegalPreparation("Nothing can be placed on the center square.")
    if s.cover[square] != EMPTY or s.markers[square] >= 0:
        raise IllegalPreparation("That square is taken.")
    if square not in preparation_squares(s):
        raise IllegalPreparation(
            "Markers and Monominoes cannot be placed on squares which have common adjacent sides."
        )
    return square


def place_monomino(b: Batch, cmd: c.PlaceMonomino) -> None:
    s = b.state
    check_turn(s, cmd.seat, "phase2_prep")
    colour = s.colour_of(cmd.seat)
    if s.to_prepare[colour][0] <= 0:
        raise IllegalPreparation("You have placed your monomino already.")
    _preparation_square(s, cmd.square)
    b.emit(
        e.MonominoPlaced,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
    )
    _after_preparation(b, cmd.seat)


def _after_preparation(b: Batch, seat: int) -> None:
    s = b.state
    left = [sum(s.to_prepare[s.colour_of(t)]) for t in (0, 1)]
    if not any(left):
        b.emit(e.PreparationCompleted, first_seat=s.gold_seat)
        _start_phase2_turn(b, s.gold_seat)
        return
    b.emit(e.TurnEnded, next_seat=1 - seat if left[1 - seat] else seat)


def _start_phase2_turn(b: Batch, seat: int) -> None:
    """``seat`` is to move: it plays if it can place a piece; else the other seat, if it can;
    else Phase 2 is over."""
    s = b.state
    if can_place_piece(s, seat):
        if s.current != seat:
            b.emit(e.TurnEnded, next_seat=seat)
    elif can_place_piece(s, 1 - seat):
        b.emit(e.TurnEnded, next_seat=1 - seat, skipped=[seat])
    else:
        end_phase2(b)


def end_phase2_turn(b: Batch, seat: int) -> None:
    s = b.state
    other = 1 - seat
    if can_place_piece(s, other):
        b.emit(e.TurnEnded, next_seat=other)
    elif can_place_piece(s, seat):
        b.emit(e.TurnEnded, next_seat=seat, skipped=[other])
    else:
        end_phase2(b)


def move_marker(b: Batch, cmd: c.MoveMarker) -> None:
    s = b.state
    check_turn(s, cmd.seat, "phase2_move")
    origin = board_square(cmd.origin, IllegalMove, "a marker")
    target = board_square(cmd.target, IllegalMove, "a marker")
    if s.markers[origin] < 0:
        raise IllegalMove("There is no marker on that square.")
    if target not in neighbours(origin):
        raise IllegalMove("A marker moves by 1 square, horizontally or vertically.")
    if s.cover[target] != EMPTY or s.markers[target] >= 0:
        raise IllegalMove(
            "Markers cannot be placed on top of other Markers, Polyominoes or on the center square."
        )
    if s.last_move == (target, origin):
        raise IllegalMove(
            '"Undo" cannot be done: a marker cannot move back to the square it occupied in the '
            "last turn."
        )
    b.emit(
        e.MarkerMoved,
        seat=cmd.seat,
        origin=at(origin),
        target=at(target),
        colour=COLOURS[s.markers[origin]],
    )
    end_phase2_turn(b, cmd.seat)
