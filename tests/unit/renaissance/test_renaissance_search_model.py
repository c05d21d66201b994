"""Renaissance's search heuristic (``renaissance.search_model``): a piece in hand counts a share
of its penalty by whether it can be laid now, fits only away from its owner's markers, or fits
nowhere."""

from __future__ import annotations

import pytest
from rn_positions import GOLD_SEAT, SILVER_SEAT, phase1, phase2

from gameplatform import get_game, search
from renaissance import search_model
from renaissance.bots import prospects

EMPTY_BOARD = """
    .......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""
FULL_BUT_A_ROW = """
    .......
    mmmmmmm
    mmmmmmm
    mmm#mmm
    mmmmmmm
    mmmmmmm
    mmmmmmm
"""


def test_a_piece_that_can_be_laid_now_counts_a_quarter_of_its_penalty() -> None:
    state = phase2(EMPTY_BOARD, "g......\n" + ".......\n" * 6, hands=((), ("domino-1",)))
    assert search_model.hand_risk(state, 1) == pytest.approx(2 * search_model.PLACEABLE_RISK)


def test_a_piece_that_fits_away_from_its_owners_markers_counts_its_free_share() -> None:
    markers = ".......\n" * 6 + "......g\n"
    state = phase2(FULL_BUT_A_ROW, markers, hands=((), ("domino-1", "tetra-I")))
    assert search_model.hand_risk(state, 1) == pytest.approx((2 + 4) * search_model.FREE_RISK)


def test_a_piece_that_fits_nowhere_counts_its_whole_penalty() -> None:
    markers = "g......\n" + ".......\n" * 6
    hands = ((), ("domino-1", "tetra-O"))
    crowded = FULL_BUT_A_ROW.replace(".......", "mmm....")
    state = phase2(crowded, markers, hands=hands)
    # one free row of 4 squares, away from the marker: the domino fits there, the square not
    assert search_model.hand_risk(state, 1) == pytest.approx(2 * search_model.FREE_RISK + 4 * 1.0)


def test_phase_2_prospects_are_the_score_less_the_expected_penalties() -> None:
    markers = "g.....s\n" + ".......\n" * 6
    state = phase2(EMPTY_BOARD, markers, hands=(("domino-1",), ("domino-2", "domino-3")))
    points = search_model.search_prospects(state)
    silver, gold = state.colour_of(SILVER_SEAT), state.colour_of(GOLD_SEAT)
    assert points[SILVER_SEAT] == pytest.approx(-search_model.hand_risk(state, silver))
    assert points[GOLD_SEAT] == pytest.approx(-search_model.hand_risk(state, gold))
    assert points[GOLD_SEAT] < points[SILVER_SEAT] < 0


def test_phase_1_is_valued_as_the_bots_prospects_value_it() -> None:
    state = phase1(acquired=(("domino-1", "domino-2"), ()))
    assert search_model.search_prospects(state) == prospects(state)


def test_the_adapter_evaluates_with_the_search_model_and_budget() -> None:
    game = get_game("renaissance")
    state = phase2(EMPTY_BOARD, "g.....s\n" + ".......\n" * 6, hands=(("domino-1",), ()))
    assert game.evaluate(state) == search_model.evaluate(state)
    bot = game.make_bot("mcts", "s")
    assert isinstance(bot, search.SearchBot)
    assert bot.budget == search_model.BUDGET
