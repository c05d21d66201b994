"""Score Calculation of Phase 1: "Basic Points" and every row of "Points for Hands"."""

from __future__ import annotations

import pytest
from rn_positions import GOLD_SEAT, SILVER_SEAT, of_type, phase1, play

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import components
from renaissance.position import piece_index
from renaissance.scoring import hands_made, phase1_points

DOMINOES = ("domino-1", "domino-2", "domino-3", "domino-4")
TRI_I = ("tri-I-1", "tri-I-2")
TRI_V = ("tri-V-1", "tri-V-2")
TETROMINOES = ("tetra-I", "tetra-O", "tetra-T", "tetra-L", "tetra-S")


def hands(*pieces: str) -> dict[str, int]:
    return dict(hands_made([piece_index(p) for p in pieces]))


def test_1_point_for_1_polyomino_acquired() -> None:
    assert phase1_points([piece_index("domino-1")]) == 1
    assert phase1_points([piece_index("tetra-O"), piece_index("tri-V-1")]) == 2


def test_dominoes_4_dominoes_make_4_points() -> None:
    assert hands(*DOMINOES) == {"Dominoes": 4}
    assert hands(*DOMINOES[:3]) == {}


def test_tri_i_2_i_triominoes_make_2_points() -> None:
    assert hands(*TRI_I) == {"Tri-I": 2}


def test_tri_v_2_v_triominoes_make_2_points() -> None:
    assert hands(*TRI_V) == {"Tri-V": 2}


def test_triominoes_4_triominoes_make_4_points_on_top_of_tri_i_and_tri_v() -> None:
    assert hands(*TRI_I, *TRI_V) == {"Tri-I": 2, "Tri-V": 2, "Triominoes": 4}


def test_tetrominoes_5_tetrominoes_make_15_points() -> None:
    assert hands(*TETROMINOES) == {"Tetrominoes": 15}
    assert hands(*TETROMINOES[1:]) == {}


def test_triple_i_the_do_tri_and_tetr_i_make_1_point_per_i() -> None:
    assert hands("domino-1", "tri-I-1", "tetra-I") == {"Triple I": 3}
    # ruling 3: every "I" held counts once the three kinds are there
    assert hands("domino-1", "domino-2", "tri-I-1", "tetra-I") == {"Triple I": 4}
    assert hands("domino-1", "tri-I-1") == {}
    assert hands("domino-1", "domino-2", "tetra-I") == {}


def test_the_points_are_accumulated_for_multiple_hands() -> None:
    everything = [p.index for p in components().pieces]
    assert dict(hands_made(everything)) == {
        "Dominoes": 4,
        "Tri-I": 2,
        "Tri-V": 2,
        "Triominoes": 4,
        "Tetrominoes": 15,
        "Triple I": 7,
    }
    assert phase1_points(everything) == 13 + 4 + 2 + 2 + 4 + 15 + 7


@pytest.mark.parametrize("winner", [SILVER_SEAT, GOLD_SEAT])
def test_at_the_end_of_phase_1_each_player_scores_pieces_and_hands(winner: int) -> None:
    colour = 0 if winner == SILVER_SEAT else 1
    acquired: list[tuple[str, ...]] = [(), ()]
    acquired[colour] = (*DOMINOES, "tri-I-1", "tetra-I")
    acquired[1 - colour] = ("tri-V-1",)
    state = phase1(
        legend={"D": "tetra-O"},
        pieces="""
        mmmmmmm
        mmmmmmm
        mmmmmmm
        mmm#mmm
        mmmmmmm
        mmmmmDD
        mmmmmDD
        """,
        acquired=(acquired[0], acquired[1]),
    )
    _, asked = play(state, c.ProposeEnd(GOLD_SEAT))
    events, after = play(asked, c.AcceptProposal(SILVER_SEAT))
    lines = [(ev.seat, ev.rule, ev.points) for ev in of_type(events, e.PointsScored)]
    assert (winner, "polyominoes", 6) in lines
    assert (winner, "Dominoes", 4) in lines
    assert (winner, "Triple I", 6) in lines
    assert (1 - winner, "polyominoes", 1) in lines
    assert after.scores[winner] == 6 + 4 + 6
    assert after.scores[1 - winner] == 1
