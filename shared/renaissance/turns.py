"""What the deciders share: the batch, the check that a command is the seat's move in this step
of the game, and a command's squares on the board."""

from __future__ import annotations

from gameplatform import execution
from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    EMPTY,
    components,
    placement_set,
)
from renaissance.errors import (
    GameOver,
    InvalidCommand,
    NotYourTurn,
    PieceDoesNotFit,
    RuleError,
    WrongPhase,
)
from renaissance.state import GameState

Batch = execution.Batch[GameState, e.Event]
"""Events of one command (the platform's batch): ``emit(Kind, **fields)`` makes, applies and
seals each."""


def check_turn(s: GameState, seat: int, *phases: str) -> None:
    if s.is_over:
        raise GameOver("The game is over.")
    if s.phase not in phases:
        raise WrongPhase(f"That is not a move of this step of the game ({step_name(s)}).")
    if seat != s.current:
        raise NotYourTurn(f"It is seat {s.current}'s turn ({step_name(s)}).")


def step_name(s: GameState) -> str:
    return {
        "lobby": "waiting for players",
        "setup": "arranging the polyominoes",
        "setup_lift": "the relocation: a polyomino must be taken off the board",
        "phase1": "Phase 1: placing markers",
        "phase1_answer": "Phase 1: a proposal waits for an answer",
        "janken": "Janken: both players show a hand",
        "distribution": "distributing the polyominoes",
        "phase2_answer": "Phase 2: a proposal to end it waits for an answer",
        "phase2_prep": "Phase 2 preparation: placing the monomino and 3 markers",
        "phase2": "Phase 2: placing a polyomino",
        "phase2_move": "Phase 2: moving a marker",
        "finished": "the game is over",
    }[s.phase]


def board_square(cell: c.Square, broken: type[RuleError], what: str) -> int:
    comps = components()
    if not comps.on_board(cell.x, cell.y):
        raise broken(f"({cell.x}, {cell.y}) is off the board: {what} goes on the 7x7 board.")
    return comps.square(cell.x, cell.y)


def piece_squares(cmd: c.PlacePiece, piece: int) -> tuple[int, ...]:
    comps = components()
    squares = tuple(board_square(cell, PieceDoesNotFit, "a polyomino") for cell in cmd.squares)
    if any(sq in comps.blocked for sq in squares):
        raise PieceDoesNotFit("No piece can enter the center square.")
    if list(squares) != sorted(set(squares)):
        raise InvalidCommand("List a piece's squares once each, in reading order (by y, then x).")
    if squares not in placement_set(comps.pieces[piece].shape_index):
        raise PieceDoesNotFit(
            f"Those squares do not form {comps.pieces[piece].id} (rotated or flipped)."
        )
    return squares


def free_piece_squares(s: GameState, cmd: c.PlacePiece, piece: int) -> tuple[int, ...]:
    """The squares ``cmd`` names, when they form ``piece`` on free squares of the board."""
    squares = piece_squares(cmd, piece)
    if any(s.cover[sq] != EMPTY for sq in squares):
        raise PieceDoesNotFit("Polyominoes cannot be placed on top of other Polyominoes.")
    if any(s.markers[sq] >= 0 for sq in squares):
        raise PieceDoesNotFit("Polyominoes cannot be placed on top of Markers.")
    return squares
