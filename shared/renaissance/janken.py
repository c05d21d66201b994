"""Janken and the distribution of the pieces in a game of Phase 2 only (rulings 14, 15): both
seats show a sealed hand, revealed together; the winner takes or gives a piece."""

from __future__ import annotations

from gameplatform.sealed import SealedChoice, salt_problem
from renaissance import commands as c
from renaissance import events as e
from renaissance.components import (
    COLOURS,
)
from renaissance.errors import (
    GameOver,
    IllegalChoice,
    InvalidCommand,
    WrongPhase,
)
from renaissance.position import piece_index, piece_name
from renaissance.turns import Batch, check_turn, step_name

JANKEN_HANDS: tuple[c.JankenHand, ...] = ("rock", "paper", "scissors")


JANKEN_BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
"""Janken: rock breaks scissors, scissors cut paper, paper wraps rock."""


def janken_winner(hands: list[str]) -> int | None:
    """The seat whose hand beats the other's; None for a draw (the same hand twice)."""
    if hands[0] == hands[1]:
        return None
    return 0 if JANKEN_BEATS[hands[0]] == hands[1] else 1


def call_janken(b: Batch) -> None:
    s = b.state
    pieces = [piece_name(p) for p in s.pool]
    b.emit(e.JankenStarted, round=s.janken_round + 1, pieces_left=pieces)


def show_hand(b: Batch, cmd: c.ShowHand) -> None:
    """Both seats show a hand, in either order; each is sealed until both are in, then the
    rules reveal both at once (ruling 15)."""
    s = b.state
    if s.is_over:
        raise GameOver("The game is over.")
    if s.phase != "janken" or s.janken is None:
        raise WrongPhase(f"That is not a move of this step of the game ({step_name(s)}).")
    if not cmd.hand:
        raise InvalidCommand("Show rock, paper or scissors.")
    if s.janken.has_chosen(cmd.seat):
        raise IllegalChoice("You have shown your hand for this Janken already.")
    if problem := salt_problem(cmd.salt):
        raise InvalidCommand(problem)
    sealed = SealedChoice.of(cmd.hand, cmd.salt)
    b.emit(
        e.HandShown,
        seat=cmd.seat,
        commitment=sealed.commitment,
        hand=cmd.hand,
        salt=cmd.salt,
    )
    janken = b.state.janken
    assert janken is not None
    if not janken.is_complete:
        return
    hands = [slot.choice for slot in janken.slots]
    winner = janken_winner(hands)
    b.emit(e.JankenPlayed, hands=hands, salts=[slot.salt for slot in janken.slots], winner=winner)
    if winner is None:
        call_janken(b)  # a draw: Janken again


def choose_piece(b: Batch, cmd: c.ChoosePiece) -> None:
    """ "The winner of Janken takes one and the other takes another", or "chooses one piece for
    the opponent and the other does the same"; then another Janken (ruling 14)."""
    s = b.state
    check_turn(s, cmd.seat, "distribution")
    piece = piece_index(cmd.piece)
    if piece not in s.pool:
        raise IllegalChoice(f"{cmd.piece} is not among the pieces left to distribute.")
    mine = s.colour_of(cmd.seat)
    colour = mine if s.distribution == "take" else 1 - mine
    b.emit(
        e.PieceDistributed,
        seat=cmd.seat,
        piece=cmd.piece,
        colour=COLOURS[colour],
        by=s.distribution,
    )
    s = b.state
    if not s.pool:
        hands = {COLOURS[col]: [piece_name(p) for p in s.hands[col]] for col in (1, 0)}
        b.emit(e.DistributionCompleted, hands=hands, first_seat=s.gold_seat)
    elif s.picks == 1:
        b.emit(e.TurnEnded, next_seat=1 - cmd.seat)
    else:
        call_janken(b)
