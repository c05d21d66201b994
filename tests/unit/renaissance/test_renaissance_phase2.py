"""Phase 2: Cleanup, Preparation, Relocation of Polyominoes and Markers, skipping, penalties, and
the score of a game. Phase 2 boards: ``.`` free, ``m`` a monomino, capitals pieces."""

from __future__ import annotations

import pytest
from rn_positions import GOLD_SEAT, SILVER_SEAT, of_type, phase1, phase2, play, sq, squares

from renaissance import commands as c
from renaissance import events as e
from renaissance.errors import IllegalMove, IllegalPreparation, PieceDoesNotFit
from renaissance.position import piece_index
from renaissance.rules import legal_actions
from renaissance.state import GameState

EMPTY_BOARD = """
    .......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""


def ended_phase1(acquired: tuple[tuple[str, ...], tuple[str, ...]]) -> GameState:
    state = phase1(acquired=acquired)
    _, asked = play(state, c.ProposeEnd(GOLD_SEAT))
    return play(asked, c.AcceptProposal(SILVER_SEAT))[1]


def test_cleanup_the_board_is_emptied_and_each_player_keeps_the_pieces_acquired() -> None:
    state = ended_phase1((("domino-1",), ("tetra-O", "tri-V-1")))
    assert state.phase == "phase2_prep"
    assert state.current == GOLD_SEAT
    assert all(m < 0 for m in state.markers)
    assert state.hands == (
        (piece_index("domino-1"),),
        (piece_index("tetra-O"), piece_index("tri-V-1")),
    )
    assert state.to_prepare == ((1, 3), (1, 3))


def test_preparation_gold_first_and_no_two_markers_or_monominoes_share_a_side() -> None:
    state = ended_phase1((("domino-1",), ("tetra-O",)))
    _, state = play(state, c.PlaceMarker(GOLD_SEAT, sq(2, 2)))
    assert state.current == SILVER_SEAT
    for x, y in ((2, 1), (1, 2), (3, 2), (2, 3)):
        with pytest.raises(IllegalPreparation, match="common adjacent sides"):
            play(state, c.PlaceMonomino(SILVER_SEAT, sq(x, y)))
    _, state = play(state, c.PlaceMonomino(SILVER_SEAT, sq(3, 1)))  # diagonal is fine
    assert not any(
        isinstance(a, c.PlaceMarker | c.PlaceMonomino) and (a.square.x, a.square.y) == (3, 0)
        for a in legal_actions(state, GOLD_SEAT)
    )


def test_preparation_has_no_pass_and_no_fixed_order() -> None:
    state = ended_phase1((("domino-1",), ("tetra-O",)))
    kinds = {type(a) for a in legal_actions(state, GOLD_SEAT)}
    assert kinds == {c.PlaceMarker, c.PlaceMonomino}
    _, state = play(state, c.PlaceMonomino(GOLD_SEAT, sq(0, 0)))
    _, state = play(state, c.PlaceMarker(SILVER_SEAT, sq(6, 6)))
    with pytest.raises(IllegalPreparation, match="monomino already"):
        play(state, c.PlaceMonomino(GOLD_SEAT, sq(4, 0)))


def test_when_all_markers_and_monominoes_are_placed_gold_places_the_first_polyomino() -> None:
    state = ended_phase1((("domino-1",), ("tetra-O",)))
    spots = iter([(0, 0), (6, 0), (0, 2), (6, 2), (0, 4), (6, 4), (0, 6), (6, 6)])
    events: list[e.Event] = []
    while state.phase == "phase2_prep":
        x, y = next(spots)
        seat = state.current
        monos, _ = state.to_prepare[state.colour_of(seat)]
        command = c.PlaceMonomino(seat, sq(x, y)) if monos else c.PlaceMarker(seat, sq(x, y))
        events, state = play(state, command)
    assert of_type(events, e.PreparationCompleted)
    assert (state.phase, state.current) == ("phase2", GOLD_SEAT)


def test_a_polyomino_must_share_a_side_with_one_of_ones_own_markers() -> None:
    state = phase2(
        EMPTY_BOARD,
        """
        g......
        .......
        .......
        ...#...
        .......
        .......
        ......s
        """,
        hands=(("domino-1",), ("domino-2",)),
    )
    with pytest.raises(PieceDoesNotFit, match="own Markers"):
        play(state, c.PlacePiece(GOLD_SEAT, "domino-2", squares((5, 6), (5, 5))[::-1]))
    with pytest.raises(PieceDoesNotFit, match="on top of Markers"):
        play(state, c.PlacePiece(GOLD_SEAT, "domino-2", squares((0, 0), (1, 0))))
    _, after = play(state, c.PlacePiece(GOLD_SEAT, "domino-2", squares((1, 0), (2, 0))))
    assert after.phase == "phase2_move"
    assert after.current == GOLD_SEAT


def test_polyominoes_cannot_be_placed_on_monominoes_or_on_the_centre() -> None:
    state = phase2(
        """
        .m.....
        .......
        .......
        ...#...
        .......
        .......
        .......
        """,
        """
        .......
        .......
        ...g...
        ...#...
        .......
        .......
        .......
        """,
        hands=((), ("tri-I-1",)),
    )
    with pytest.raises(PieceDoesNotFit, match="center"):
        play(state, c.PlacePiece(GOLD_SEAT, "tri-I-1", squares((2, 3), (3, 3), (4, 3))))
    with pytest.raises(PieceDoesNotFit, match="on top of other Polyominoes"):
        play(state, c.PlacePiece(GOLD_SEAT, "tri-I-1", squares((1, 0), (1, 1), (1, 2))))


def test_a_marker_of_either_colour_moves_one_square_across_a_side_onto_a_free_square() -> None:
    state = phase2(
        """
        .AA....
        .......
        .......
        ...#...
        .......
        .......
        .......
        """,
        """
        g......
        s......
        .......
        ...#...
        .......
        .......
        .......
        """,
        {"A": "domino-1"},
        step="phase2_move",
    )
    moves = {
        ((a.origin.x, a.origin.y), (a.target.x, a.target.y))
        for a in legal_actions(state, GOLD_SEAT)
        if isinstance(a, c.MoveMarker)
    }
    assert moves == {((0, 1), (1, 1)), ((0, 1), (0, 2))}  # Gold's (0, 0) is hemmed in
    with pytest.raises(IllegalMove, match="on top of other Markers, Polyominoes"):
        play(state, c.MoveMarker(GOLD_SEAT, sq(0, 0), sq(1, 0)))
    with pytest.raises(IllegalMove, match="by 1 square"):
        play(state, c.MoveMarker(GOLD_SEAT, sq(0, 1), sq(1, 2)))
    events, _after = play(state, c.MoveMarker(GOLD_SEAT, sq(0, 1), sq(1, 1)))  # Silver's marker
    assert isinstance(events[0], e.MarkerMoved)
    assert events[0].colour == "silver"


def test_undo_cannot_be_done_but_the_same_marker_may_move_another_way() -> None:
    state = phase2(
        EMPTY_BOARD,
        """
        .......
        .......
        .....g.
        ...#...
        .......
        .......
        s......
        """,
        step="phase2_move",
        last_move=((4, 2), (5, 2)),  # the turn before, this marker came from (4, 2)
    )
    with pytest.raises(IllegalMove, match="Undo"):
        play(state, c.MoveMarker(GOLD_SEAT, sq(5, 2), sq(4, 2)))
    play(state, c.MoveMarker(GOLD_SEAT, sq(5, 2), sq(5, 1)))
    play(state, c.MoveMarker(GOLD_SEAT, sq(5, 2), sq(6, 2)))


def test_when_no_marker_can_move_the_move_is_skipped() -> None:
    state = phase2(
        """
        ..AAmmm
        m.mmmmm
        mmmmmmm
        mmm#mmm
        mmmmmmm
        mmmmmmm
        mmmmmmm
        """,
        """
        g......
        .......
        .......
        ...#...
        .......
        .......
        .......
        """,
        {"A": "domino-1"},
        hands=((), ("domino-2",)),
    )
    # the domino fills the last free squares: Gold's corner marker has nowhere to go
    events, after = play(state, c.PlacePiece(GOLD_SEAT, "domino-2", squares((1, 0), (1, 1))))
    assert of_type(events, e.MarkerMoveSkipped)
    assert of_type(events, e.Phase2Ended)
    assert after.is_over


def test_a_turn_is_skipped_when_no_piece_in_hand_fits_and_the_other_player_goes_on() -> None:
    state = phase2(
        EMPTY_BOARD,
        """
        g......
        .......
        .......
        ...#...
        .......
        .......
        .......
        """,
        hands=(("tetra-O",), ("domino-1", "domino-2")),  # Silver has no marker: cannot place
        step="phase2",
    )
    _events, after = play(state, c.PlacePiece(GOLD_SEAT, "domino-1", squares((1, 0), (2, 0))))
    _, after = play(after, c.MoveMarker(GOLD_SEAT, sq(0, 0), sq(0, 1)))
    assert after.current == GOLD_SEAT
    assert after.phase == "phase2"


def test_unplaced_pieces_cost_2_3_and_4_points_and_the_game_score_is_phase1_minus_phase2() -> None:
    state = phase2(
        EMPTY_BOARD,
        """
        g......
        .......
        .......
        ...#...
        .......
        .......
        .......
        """,
        hands=(("domino-3", "tri-V-1", "tetra-T"), ("domino-1",)),
    )
    from msgspec.structs import replace

    state = replace(state, scores=(10, 8), set_points=(10, 8))
    events, after = play(state, c.PlacePiece(GOLD_SEAT, "domino-1", squares((1, 0), (2, 0))))
    if after.phase == "phase2_move":
        events, after = play(after, c.MoveMarker(GOLD_SEAT, sq(0, 0), sq(0, 1)))
    penalties = {(ev.seat, ev.points) for ev in of_type(events, e.PointsScored)}
    assert penalties == {(SILVER_SEAT, -(2 + 3 + 4))}
    (ended,) = of_type(events, e.SetEnded)
    assert isinstance(ended, e.SetEnded)
    assert ended.scores == [10 - 9, 8]
    assert after.is_over
    assert after.winners == (GOLD_SEAT,)
