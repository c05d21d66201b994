"""The deciders of Renaissance (``DECIDERS``, one per command); placing a piece or a marker
goes to the step of the game it belongs to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from renaissance import commands as c
from renaissance.errors import (
    RelocationRule,
)
from renaissance.janken import choose_piece, show_hand
from renaissance.phase1 import place_marker, push
from renaissance.phase2 import move_marker, place_in_phase2, place_monomino, prepare_marker
from renaissance.position import piece_index
from renaissance.proposals import answer, propose
from renaissance.seating import cancel, claim_timeout, join, leave, remove_player, resign, start
from renaissance.setup import lift, place_in_setup
from renaissance.turns import Batch, check_turn


def _place_piece(b: Batch, cmd: c.PlacePiece) -> None:
    """A polyomino placed: in the set-up (``setup.py``) or in Phase 2 (``phase2.py``)."""
    s = b.state
    if s.phase == "setup_lift" and cmd.seat == s.current:
        raise RelocationRule(
            "The pieces left do not fit: take one of the polyominoes from the board first."
        )
    check_turn(s, cmd.seat, "setup", "phase2")
    piece = piece_index(cmd.piece)
    if s.phase == "setup":
        place_in_setup(b, cmd, piece)
    else:
        place_in_phase2(b, cmd, piece)


def _place_marker(b: Batch, cmd: c.PlaceMarker) -> None:
    """A marker placed: in Phase 1 (``phase1.py``) or in the Phase 2 preparation
    (``phase2.py``)."""
    check_turn(b.state, cmd.seat, "phase1", "phase2_prep")
    if b.state.phase == "phase2_prep":
        prepare_marker(b, cmd)
    else:
        place_marker(b, cmd)


DECIDERS: dict[type[c.Command], Callable[[Batch, Any], None]] = {
    c.JoinGame: join,
    c.LeaveGame: leave,
    c.RemovePlayer: remove_player,
    c.CancelGame: cancel,
    c.Resign: resign,
    c.ClaimTimeout: claim_timeout,
    c.StartGame: start,
    c.PlacePiece: _place_piece,
    c.LiftPiece: lift,
    c.PlaceMarker: _place_marker,
    c.PushMarker: push,
    c.ProposeEnd: propose,
    c.ProposeAward: propose,
    c.AcceptProposal: answer,
    c.DeclineProposal: answer,
    c.PlaceMonomino: place_monomino,
    c.MoveMarker: move_marker,
    c.ShowHand: show_hand,
    c.ChoosePiece: choose_piece,
}
