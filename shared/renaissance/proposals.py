"""Proposals: in Phase 1 to end it or to award a polyomino, in Phase 2 (when the game allows
it, ruling 16) to end it; the other seat accepts or declines."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance.errors import (
    IllegalProposal,
)
from renaissance.phase1 import acquire, next_phase1_turn
from renaissance.placement import can_place_marker
from renaissance.position import piece_index, pieces_on_board
from renaissance.sets import end_phase1, end_phase2
from renaissance.turns import Batch, check_turn


def propose(b: Batch, cmd: c.ProposeEnd | c.ProposeAward) -> None:
    s = b.state
    check_turn(s, cmd.seat, "phase1", "phase2")
    if s.phase == "phase2" and not s.phase2_agreement:
        raise IllegalProposal(
            "Phase 2 ends when no piece in hand can be placed; this game was not created to "
            "end it by agreement."
        )
    if s.proposed:
        thing = "a marker" if s.phase == "phase1" else "a piece"
        raise IllegalProposal(f"One proposal a turn: place {thing} now.")
    if s.phase == "phase2" and isinstance(cmd, c.ProposeAward):
        raise IllegalProposal("In Phase 2 the players may only agree to end it.")
    if isinstance(cmd, c.ProposeEnd):
        b.emit(e.ProposalMade, seat=cmd.seat, kind="end")
        return
    piece = piece_index(cmd.piece)
    if piece not in pieces_on_board(s):
        raise IllegalProposal(f"{cmd.piece} is not on the board.")
    b.emit(e.ProposalMade, seat=cmd.seat, kind="award", piece=cmd.piece, to=cmd.to)


def answer(b: Batch, cmd: c.AcceptProposal | c.DeclineProposal) -> None:
    s = b.state
    check_turn(s, cmd.seat, "phase1_answer", "phase2_answer")
    proposal = s.proposal
    assert proposal is not None
    if isinstance(cmd, c.DeclineProposal):
        b.emit(e.ProposalDeclined, seat=cmd.seat)
        return
    b.emit(e.ProposalAccepted, seat=cmd.seat)
    if s.phase == "phase2_answer":
        end_phase2(b, "agreement")  # ruling 16
        return
    if proposal.kind == "end":
        end_phase1(b, "agreement")
        return
    acquire(b, None, proposal.piece, proposal.to, "agreement")
    if not pieces_on_board(b.state):
        end_phase1(b, "all polyominoes taken")
    elif not can_place_marker(b.state, proposal.seat):
        next_phase1_turn(b, proposal.seat)
