"""Preparation: "Arrangement of Polyominoes" and the relocation when pieces do not fit (ruling 4).

Letters in the diagrams: A-D dominoes 1-4, E F the I triominoes, G H the V triominoes, I O T L S
the tetrominoes of those shapes.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace
from rn_positions import GOLD_SEAT, SILVER_SEAT, new_game, of_type, play, setup, squares

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import MONOMINO, components, orientations
from renaissance.errors import NotYourTurn, PieceDoesNotFit, RelocationRule
from renaissance.packing import can_pack, shape_counts
from renaissance.placement import free_placements, pieces_fit
from renaissance.position import free_mask, piece_index
from renaissance.rules import legal_actions
from renaissance.state import GameState

LEGEND = {
    "A": "domino-1",
    "B": "domino-2",
    "C": "domino-3",
    "D": "domino-4",
    "E": "tri-I-1",
    "F": "tri-I-2",
    "G": "tri-V-1",
    "H": "tri-V-2",
    "I": "tetra-I",
    "O": "tetra-O",
    "T": "tetra-T",
    "L": "tetra-L",
    "S": "tetra-S",
}

# Gold is about to place the T in the top-left corner; the O is the only other piece left.
BEFORE_THE_T = """
    .IIII..
    ..SBBAA
    .SS.DD.
    FSH#LLE
    FHH.L.E
    FG..LCE
    .GG..C.
"""
THE_T = squares((0, 0), (0, 1), (1, 1), (0, 2))


def blocked_by_the_t() -> tuple[list[e.Event], GameState]:
    state = setup(BEFORE_THE_T, LEGEND, to_move=GOLD_SEAT)
    return play(state, c.PlacePiece(GOLD_SEAT, "tetra-T", THE_T))


def test_silver_goes_first_in_placing_polyominoes() -> None:
    state = new_game()
    assert (state.phase, state.current) == ("setup", SILVER_SEAT)
    with pytest.raises(NotYourTurn):
        play(state, c.PlacePiece(GOLD_SEAT, "domino-1", squares((0, 0), (1, 0))))
    _, after = play(state, c.PlacePiece(SILVER_SEAT, "domino-1", squares((0, 0), (1, 0))))
    assert after.current == GOLD_SEAT


def test_polyominoes_can_be_rotated_or_flipped() -> None:
    state = new_game()
    laid = {}
    for piece in components().pieces:
        ways = {
            tuple(
                sorted(
                    (s.x - min(q.x for q in a.squares), s.y - min(q.y for q in a.squares))
                    for s in a.squares
                )
            )
            for a in legal_actions(state, SILVER_SEAT)
            if isinstance(a, c.PlacePiece) and a.piece == piece.id
        }
        laid[piece.id] = len(ways)
        assert len(ways) == len(orientations(piece.shape))
    assert laid["tetra-L"] == 8
    assert laid["tetra-S"] == 4
    assert laid["tetra-O"] == 1
    assert laid["tetra-T"] == 4
    assert laid["tri-V-1"] == 4
    assert laid["domino-1"] == 2


def test_polyominoes_cannot_be_placed_on_top_of_other_polyominoes_or_on_the_centre() -> None:
    state = setup(BEFORE_THE_T, LEGEND, to_move=GOLD_SEAT)
    with pytest.raises(PieceDoesNotFit, match="on top of other Polyominoes"):
        play(state, c.PlacePiece(GOLD_SEAT, "tetra-O", squares((5, 0), (6, 0), (5, 1), (6, 1))))
    with pytest.raises(PieceDoesNotFit, match="center"):
        play(state, c.PlacePiece(GOLD_SEAT, "tetra-T", squares((3, 2), (2, 3), (3, 3), (4, 3))))
    with pytest.raises(PieceDoesNotFit, match="do not form"):
        play(state, c.PlacePiece(GOLD_SEAT, "tetra-T", squares((0, 0), (0, 1), (0, 2))))


def test_the_whole_set_fits_on_the_board() -> None:
    state = new_game()
    assert can_pack(free_mask(state), shape_counts(state.pool))


def test_when_the_pieces_left_do_not_fit_in_the_next_player_takes_a_polyomino_off() -> None:
    events, after = blocked_by_the_t()
    (required,) = of_type(events, e.RelocationRequired)
    assert isinstance(required, e.RelocationRequired)
    assert (required.seat, required.pieces_left) == (SILVER_SEAT, ["tetra-O"])
    assert after.phase == "setup_lift"
    actions = legal_actions(after, SILVER_SEAT)
    assert actions
    assert all(isinstance(a, c.LiftPiece) for a in actions)
    assert len(actions) == 12  # every polyomino on the board (all 13 but the O)
    with pytest.raises(RelocationRule, match="take one of the polyominoes"):
        play(after, c.PlacePiece(SILVER_SEAT, "tetra-O", squares((5, 0), (6, 0), (5, 1), (6, 1))))


def test_when_one_piece_taken_off_is_not_enough_another_is_taken() -> None:
    _, state = blocked_by_the_t()
    events, state = play(state, c.LiftPiece(SILVER_SEAT, "domino-3"))
    assert isinstance(events[0], e.PieceLifted)
    assert events[0].still_blocked
    assert state.phase == "setup_lift"
    events, state = play(state, c.LiftPiece(SILVER_SEAT, "tetra-L"))
    assert isinstance(events[0], e.PieceLifted)
    assert not events[0].still_blocked
    assert state.phase == "setup"
    assert state.current == SILVER_SEAT


def test_polyominoes_taken_from_the_board_cannot_be_placed_back_in_the_same_turn() -> None:
    _, state = blocked_by_the_t()
    _, state = play(state, c.LiftPiece(SILVER_SEAT, "domino-3"))
    _, state = play(state, c.LiftPiece(SILVER_SEAT, "tetra-L"))
    with pytest.raises(RelocationRule, match="same turn"):
        play(state, c.PlacePiece(SILVER_SEAT, "tetra-L", squares((4, 3), (5, 3), (4, 4), (4, 5))))
    placed = {a.piece for a in legal_actions(state, SILVER_SEAT) if isinstance(a, c.PlacePiece)}
    assert placed == {"tetra-O"}


def test_after_a_lift_a_placement_must_leave_room_for_all_the_pieces_left() -> None:
    _, state = blocked_by_the_t()
    _, state = play(state, c.LiftPiece(SILVER_SEAT, "tetra-L"))
    assert state.phase == "setup"  # with the L off, the O and the L fit again
    rest = tuple(p for p in state.pool if p != piece_index("tetra-O"))
    places = list(free_placements(state, piece_index("tetra-O")))
    good = [sq for sq in places if pieces_fit(state, rest, sq)]
    bad = [sq for sq in places if not pieces_fit(state, rest, sq)]
    assert good
    assert bad
    offered = [
        tuple(components().square(s.x, s.y) for s in a.squares)
        for a in legal_actions(state, SILVER_SEAT)
        if isinstance(a, c.PlacePiece)
    ]
    assert offered == good
    cells = [c.Square(*components().xy(sq)) for sq in bad[0]]
    with pytest.raises(RelocationRule, match="so that all the pieces fit in"):
        play(state, c.PlacePiece(SILVER_SEAT, "tetra-O", cells))
    cells = [c.Square(*components().xy(sq)) for sq in good[0]]
    _, after = play(state, c.PlacePiece(SILVER_SEAT, "tetra-O", cells))
    assert after.protected == (piece_index("tetra-O"),)  # placed right after a lift
    assert after.adjusting
    assert after.current == GOLD_SEAT


def test_the_polyomino_placed_right_after_another_was_taken_cannot_be_taken() -> None:
    _, state = blocked_by_the_t()
    state = replace(state, protected=(piece_index("tetra-T"),))
    with pytest.raises(RelocationRule, match="right after another one was taken"):
        play(state, c.LiftPiece(SILVER_SEAT, "tetra-T"))
    assert c.LiftPiece(SILVER_SEAT, "tetra-T") not in legal_actions(state, SILVER_SEAT)


def test_nothing_is_taken_off_while_the_pieces_left_still_fit() -> None:
    state = setup(BEFORE_THE_T, LEGEND, to_move=GOLD_SEAT)
    with pytest.raises(RelocationRule, match="only when some pieces left do not fit"):
        play(state, c.LiftPiece(GOLD_SEAT, "tetra-I"))


def test_when_all_polyominoes_are_placed_monominoes_fill_every_free_square_and_gold_begins() -> (
    None
):
    state = setup(
        """
        TIIII..
        TTSCCAA
        TSS.DD.
        FSH#BBE
        FHH.OOE
        FG..OOE
        .GG....
        """,
        LEGEND,
        to_move=GOLD_SEAT,
    )
    assert [components().pieces[p].id for p in state.pool] == ["tetra-L"]
    events, after = play(
        state, c.PlacePiece(GOLD_SEAT, "tetra-L", squares((3, 5), (3, 6), (4, 6), (5, 6)))
    )
    (done,) = of_type(events, e.SetupCompleted)
    assert isinstance(done, e.SetupCompleted)
    assert len(done.monominoes) == 8 == after.cover.count(MONOMINO)
    assert (after.phase, after.current, after.supply) == ("phase1", GOLD_SEAT, (24, 24))
