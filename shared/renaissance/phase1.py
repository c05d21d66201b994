"""Phase 1: markers placed or pushed in, polyominoes acquired by majority once fully occupied,
the turns passing until no marker can be placed."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    CENTRE,
    COLOURS,
    inward,
    is_outer,
    step,
)
from renaissance.errors import (
    IllegalMarker,
    IllegalPush,
)
from renaissance.placement import (
    can_place_marker,
    covered_pieces,
    may_place_marker_on,
    may_push_at,
    push_run,
)
from renaissance.position import at, piece_name, pieces_on_board, squares_of_piece
from renaissance.sets import end_phase1
from renaissance.turns import Batch, board_square, check_turn


def place_marker(b: Batch, cmd: c.PlaceMarker) -> None:
    """A marker from the supply placed by the "Instructions in placing Markers"."""
    s = b.state
    colour = s.colour_of(cmd.seat)
    square = board_square(cmd.square, IllegalMarker, "a marker")
    if s.cover[square] == CENTRE:
        raise IllegalMarker("No Markers can be placed on the center square.")
    if s.markers[square] >= 0:
        raise IllegalMarker(
            "Markers cannot be placed on top of other Markers (on the outmost squares, push in)."
        )
    if s.supply[colour] <= 0:
        raise IllegalMarker("You have no markers left in hand.")
    if not may_place_marker_on(s, colour, square):
        raise IllegalMarker(
            "A marker goes on a square diagonally adjacent to one of your markers, on the 8 "
            "squares around the center, or on the outmost row next to one of your markers there."
        )
    b.emit(
        e.MarkerPlaced,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
        stage="phase1",
    )
    _after_marker(b, cmd.seat)


def push(b: Batch, cmd: c.PushMarker) -> None:
    s = b.state
    check_turn(s, cmd.seat, "phase1")
    colour = s.colour_of(cmd.seat)
    square = board_square(cmd.square, IllegalPush, "a marker")
    if not is_outer(square):
        raise IllegalPush("Markers are pushed in only from the outmost squares of the board.")
    if s.markers[square] < 0:
        raise IllegalPush("That square is free: place the marker there instead of pushing.")
    if not may_push_at(s, colour, square):
        raise IllegalPush(
            "Push in at one of your own markers on the outmost squares, or at the squares next "
            "to it on the outmost row."
        )
    if cmd.direction not in inward(square):
        raise IllegalPush("Markers are pushed into the board, across the edge the square is on.")
    if s.supply[colour] <= 0:
        raise IllegalPush("You have no markers left in hand.")
    run = push_run(s, square, cmd.direction)
    if run is None:
        raise IllegalPush(
            "No Markers are pushed out of the board or enter in the center square: the row is "
            "full up to the edge or the center."
        )
    moved = []
    for origin in reversed(run):
        target = step(origin, cmd.direction)
        assert target is not None
        moved.append(e.Step(at(origin), at(target)))
    b.emit(
        e.MarkersPushed,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
        direction=cmd.direction,
        moved=moved,
    )
    _after_marker(b, cmd.seat)


def _after_marker(b: Batch, seat: int) -> None:
    """Acquisition of every fully occupied polyomino with a majority (several at once), then
    the next turn."""
    for piece, silver, gold in covered_pieces(b.state):
        if silver == gold:
            continue  # "the pieces are not taken until either color takes the majority"
        acquire(b, seat, piece, 1 if gold > silver else 0, "majority")
    next_phase1_turn(b, seat)


def acquire(b: Batch, seat: int | None, piece: int, colour: int, by: str) -> None:
    s = b.state
    squares = squares_of_piece(s, piece)
    marks = [s.markers[sq] for sq in squares]
    b.emit(
        e.PieceAcquired,
        seat=seat,
        piece=piece_name(piece),
        colour=COLOURS[colour],
        by=by,
        silver=marks.count(0),
        gold=marks.count(1),
        squares=[at(sq) for sq in squares],
    )


def next_phase1_turn(b: Batch, seat: int) -> None:
    s = b.state
    if not pieces_on_board(s):
        end_phase1(b, "all polyominoes taken")
        return
    other = 1 - seat
    if can_place_marker(s, other):
        b.emit(e.TurnEnded, next_seat=other)
    elif can_place_marker(s, seat):
        b.emit(e.TurnEnded, next_seat=seat, skipped=[other])
    else:
        end_phase1(b, "no marker can be placed by either player")
