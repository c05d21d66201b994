"""Phase 1: "Acquisition of Polyominoes", "Operation on Acquisition" 1-3, the end of Phase 1."""

from __future__ import annotations

import pytest
from rn_positions import GOLD_SEAT, SILVER_SEAT, drawn_markers, of_type, phase1, play, sq

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import MONOMINO
from renaissance.errors import IllegalProposal, WrongPhase
from renaissance.position import piece_index
from renaissance.rules import legal_actions

# An L tetromino (L) in the top-left corner, a domino (D) under it, monominoes elsewhere.
BOARD = """
    LLLmmmm
    LDDmmmm
    mmmmmmm
    mmm#mmm
    mmmmmmm
    mmmmmmm
    mmmmmTT
"""
LEGEND = {"L": "tetra-L", "D": "domino-1", "T": "domino-2"}


def test_a_polyomino_fully_occupied_goes_to_the_majority_2_to_1() -> None:
    state = phase1(
        BOARD,
        """
        gg.....
        .s.....
        ..g....
        ...#...
        .......
        .......
        .......
        """,
        LEGEND,
        to_move=GOLD_SEAT,
    )
    # the L covers (0, 0) (1, 0) (2, 0) (0, 1): with (0, 1) still free it is not taken
    events, after = play(state, c.PlaceMarker(GOLD_SEAT, sq(2, 0)))
    assert not of_type(events, e.PieceAcquired)  # (0, 1) is still free
    state = phase1(
        BOARD,
        """
        gsg....
        ..s....
        .g.....
        ...#...
        .......
        .......
        .......
        """,
        LEGEND,
        to_move=GOLD_SEAT,
    )
    events, after = play(state, c.PlaceMarker(GOLD_SEAT, sq(0, 1)))  # diagonal to (1, 2)
    (taken,) = of_type(events, e.PieceAcquired)
    assert isinstance(taken, e.PieceAcquired)
    assert (taken.piece, taken.colour, taken.gold, taken.silver) == ("tetra-L", "gold", 3, 1)
    assert after.acquired == ((), (piece_index("tetra-L"),))


def test_on_acquisition_the_markers_return_to_both_players_and_monominoes_fill_the_squares() -> (
    None
):
    state = phase1(
        BOARD,
        """
        gsg....
        ..s....
        .g.....
        ...#...
        .......
        .......
        .......
        """,
        LEGEND,
        to_move=GOLD_SEAT,
    )
    before = state.supply
    _, after = play(state, c.PlaceMarker(GOLD_SEAT, sq(0, 1)))
    # 1. the majority takes the piece; 2. its markers go back to both players
    assert after.supply == (before[0] + 1, before[1] - 1 + 3)
    # 3. monominoes are placed on the squares where the taken polyomino was
    for x, y in ((0, 0), (1, 0), (2, 0), (0, 1)):
        assert after.cover[y * 7 + x] == MONOMINO
    assert drawn_markers(after).splitlines()[:3] == [".......", "..s....", ".g....."]


def test_a_tie_1_to_1_or_2_to_2_waits_until_a_push_gives_one_colour_the_majority() -> None:
    state = phase1(
        BOARD,
        """
        ..g....
        .gs....
        .......
        ...#...
        .......
        .......
        .......
        """,
        LEGEND,
        to_move=SILVER_SEAT,
    )
    events, after = play(state, c.PlaceMarker(SILVER_SEAT, sq(3, 0)))  # not on the domino
    assert not of_type(events, e.PieceAcquired)  # the domino (1,1)-(2,1) is 1:1
    assert piece_index("domino-1") in after.cover
    # Gold pushes the row (2, 0) down: its (2, 0) marker goes onto (2, 1), Silver's onto (2, 2)
    state = phase1(
        BOARD,
        """
        ..g....
        .gs....
        .......
        ...#...
        .......
        .......
        .......
        """,
        LEGEND,
        to_move=GOLD_SEAT,
    )
    events, after = play(state, c.PushMarker(GOLD_SEAT, sq(2, 0), "south"))
    (taken,) = of_type(events, e.PieceAcquired)
    assert isinstance(taken, e.PieceAcquired)
    assert (taken.piece, taken.colour, taken.gold, taken.silver) == ("domino-1", "gold", 2, 0)


def test_several_polyominoes_can_be_taken_at_one_time_by_a_push() -> None:
    state = phase1(
        """
        mmmmmmm
        mmmmmmm
        mmmmmmm
        mmm#mmm
        mmmmmmm
        mABmmmm
        mABmmmm
        """,
        """
        .......
        .......
        .......
        ...#...
        .......
        .gs....
        gg.....
        """,
        {"A": "domino-1", "B": "domino-2"},
        to_move=GOLD_SEAT,
    )
    # Gold pushes the bottom row in from the corner: (0, 6) and (1, 6) move one square right
    # and both dominoes are fully occupied: A is Gold 2:0 and is taken, B is 1:1 and waits.
    events, after = play(state, c.PushMarker(GOLD_SEAT, sq(0, 6), "east"))
    taken = [(t.piece, t.colour) for t in of_type(events, e.PieceAcquired)]
    assert taken == [("domino-1", "gold")]  # B is 1:1 (silver (2, 5), gold (2, 6)): it waits
    state = phase1(
        """
        mmmmmmm
        mmmmmmm
        mmmmmmm
        mmm#mmm
        mmmmmmm
        mABmmmm
        mABmmmm
        """,
        """
        .......
        .......
        .......
        ...#...
        .......
        .gg....
        gg.....
        """,
        {"A": "domino-1", "B": "domino-2"},
        to_move=GOLD_SEAT,
    )
    events, after = play(state, c.PushMarker(GOLD_SEAT, sq(0, 6), "east"))
    taken = [(t.piece, t.colour) for t in of_type(events, e.PieceAcquired)]
    assert taken == [("domino-1", "gold"), ("domino-2", "gold")]
    assert after.acquired[1] == (piece_index("domino-1"), piece_index("domino-2"))


def test_monominoes_are_never_acquired() -> None:
    state = phase1(to_move=GOLD_SEAT)
    events, after = play(state, c.PlaceMarker(GOLD_SEAT, sq(2, 2)))  # a monomino square
    assert not of_type(events, e.PieceAcquired)
    assert after.markers[2 * 7 + 2] == 1


def test_phase_1_ends_when_all_the_polyominoes_are_taken() -> None:
    board = """
        mmmmmmm
        mmmmmmm
        mmDDmmm
        mmm#mmm
        mmmmmmm
        mmmmmmm
        mmmmmmm
    """
    state = phase1(
        board,
        """
        .......
        .......
        ..g....
        ...#...
        .......
        .......
        .......
        """,
        {"D": "domino-1"},
        to_move=GOLD_SEAT,
    )
    events, after = play(state, c.PlaceMarker(GOLD_SEAT, sq(3, 2)))
    ended = of_type(events, e.Phase1Ended)
    assert ended
    assert isinstance(ended[0], e.Phase1Ended)
    assert ended[0].reason == "all polyominoes taken"
    assert after.phase == "phase2_prep"
    assert after.current == GOLD_SEAT


def test_phase_1_ends_by_agreement_and_the_pieces_left_are_taken_away() -> None:
    state = phase1(BOARD, legend=LEGEND, to_move=GOLD_SEAT)
    _, asked = play(state, c.ProposeEnd(GOLD_SEAT))
    assert asked.phase == "phase1_answer"
    assert asked.current == SILVER_SEAT
    assert legal_actions(asked, SILVER_SEAT) == [
        c.AcceptProposal(SILVER_SEAT),
        c.DeclineProposal(SILVER_SEAT),
    ]
    with pytest.raises(WrongPhase):
        play(asked, c.PlaceMarker(SILVER_SEAT, sq(2, 2)))
    events, after = play(asked, c.AcceptProposal(SILVER_SEAT))
    (ended,) = of_type(events, e.Phase1Ended)
    assert isinstance(ended, e.Phase1Ended)
    assert ended.reason == "agreement"
    assert ended.removed == ["domino-1", "domino-2", "tetra-L"]
    assert after.hands == ((), ())  # the pieces left "will not be used in Phase 2"


def test_a_declined_proposal_leaves_the_proposer_to_place_a_marker_and_one_proposal_a_turn() -> (
    None
):
    state = phase1(BOARD, legend=LEGEND, to_move=GOLD_SEAT)
    _, asked = play(state, c.ProposeEnd(GOLD_SEAT))
    _, back = play(asked, c.DeclineProposal(SILVER_SEAT))
    assert back.phase == "phase1"
    assert back.current == GOLD_SEAT
    with pytest.raises(IllegalProposal, match="One proposal a turn"):
        play(back, c.ProposeEnd(GOLD_SEAT))
    assert all(isinstance(a, c.PlaceMarker | c.PushMarker) for a in legal_actions(back, GOLD_SEAT))


def test_pieces_can_be_distributed_as_agreed_before_they_are_fully_occupied() -> None:
    state = phase1(BOARD, legend=LEGEND, to_move=GOLD_SEAT)
    _, asked = play(state, c.ProposeAward(GOLD_SEAT, "tetra-L", "silver"))
    events, after = play(asked, c.AcceptProposal(SILVER_SEAT))
    (taken,) = of_type(events, e.PieceAcquired)
    assert isinstance(taken, e.PieceAcquired)
    assert (taken.piece, taken.colour, taken.by) == ("tetra-L", "silver", "agreement")
    assert after.acquired == ((piece_index("tetra-L"),), ())
    assert after.phase == "phase1"
    assert after.current == GOLD_SEAT


def test_a_player_who_cannot_place_a_marker_is_skipped_and_when_neither_can_phase_1_ends() -> None:
    state = phase1(BOARD, legend=LEGEND, to_move=GOLD_SEAT, supply=(0, 5))
    events, _ = play(state, c.PlaceMarker(GOLD_SEAT, sq(2, 2)))
    (turn,) = of_type(events, e.TurnEnded)
    assert isinstance(turn, e.TurnEnded)
    assert (turn.next_seat, turn.skipped) == (GOLD_SEAT, [SILVER_SEAT])
    state = phase1(BOARD, legend=LEGEND, to_move=GOLD_SEAT, supply=(0, 1))
    events, _after = play(state, c.PlaceMarker(GOLD_SEAT, sq(2, 2)))
    (ended,) = of_type(events, e.Phase1Ended)
    assert isinstance(ended, e.Phase1Ended)
    assert ended.reason == "no marker can be placed by either player"
