"""``legal_actions``: every command a seat may give now; ``decide`` accepts exactly these."""

from __future__ import annotations

from renaissance import commands as c
from renaissance.components import (
    COLOURS,
    components,
)
from renaissance.janken import JANKEN_HANDS
from renaissance.placement import (
    liftable,
    marker_moves,
    marker_squares,
    phase2_placements,
    preparation_squares,
    pushes,
    setup_placements,
)
from renaissance.position import piece_name, pieces_on_board
from renaissance.state import GameState


def _sq(square: int) -> c.Square:
    return c.Square(*components().xy(square))


def _place(seat: int, piece: int, squares: tuple[int, ...]) -> c.PlacePiece:
    return c.PlacePiece(seat, piece_name(piece), [_sq(sq) for sq in squares])


def legal_actions(s: GameState, seat: int) -> list[c.Command]:
    """Every command ``seat`` may give now; ``decide`` accepts exactly these. A Janken's hand
    is listed without a salt (the service seals it; ruling 15), for either seat not yet in."""
    if s.phase == "janken" and s.janken is not None and not s.janken.has_chosen(seat):
        return [c.ShowHand(seat, hand) for hand in JANKEN_HANDS]
    if s.phase in ("lobby", "finished", "cancelled") or seat != s.current:
        return []
    colour = s.colour_of(seat)
    out: list[c.Command] = []
    if s.phase == "setup":
        out += [_place(seat, piece, squares) for piece, squares in setup_placements(s)]
    elif s.phase == "setup_lift":
        out += [c.LiftPiece(seat, piece_name(p)) for p in liftable(s)]
    elif s.phase == "phase1":
        out += [c.PlaceMarker(seat, _sq(sq)) for sq in marker_squares(s, colour)]
        out += [c.PushMarker(seat, _sq(sq), d) for sq, d in pushes(s, colour)]
        if not s.proposed:
            out.append(c.ProposeEnd(seat))
            out += [
                c.ProposeAward(seat, piece_name(p), to)
                for p in pieces_on_board(s)
                for to in COLOURS
            ]
    elif s.phase in ("phase1_answer", "phase2_answer"):
        out += [c.AcceptProposal(seat), c.DeclineProposal(seat)]
    elif s.phase == "distribution":
        out += [c.ChoosePiece(seat, piece_name(p)) for p in s.pool]
    elif s.phase == "phase2_prep":
        monos, markers = s.to_prepare[colour]
        squares = preparation_squares(s)
        if monos:
            out += [c.PlaceMonomino(seat, _sq(sq)) for sq in squares]
        if markers:
            out += [c.PlaceMarker(seat, _sq(sq)) for sq in squares]
    elif s.phase == "phase2":
        out += [_place(seat, piece, squares) for piece, squares in phase2_placements(s, colour)]
        if s.phase2_agreement and not s.proposed:
            out.append(c.ProposeEnd(seat))
    elif s.phase == "phase2_move":
        out += [c.MoveMarker(seat, _sq(a), _sq(b)) for a, b in marker_moves(s)]
    return out
