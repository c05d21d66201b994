"""GOAL and the Competition Rule: a game's score, sets, and the two winning conditions."""

from __future__ import annotations

from msgspec.structs import replace
from rn_positions import GOLD_SEAT, SILVER_SEAT, of_type, phase2, play, squares

from renaissance import commands as c
from renaissance import events as e
from renaissance.game import play as play_game
from renaissance.state import GameState

LAST_TURN = """
    g......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""
EMPTY = """
    .......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""


def finish_set(points: tuple[int, int], **options: object) -> tuple[list[e.Event], GameState]:
    """The last placement of a set in which the seats scored ``points``."""
    state = phase2(EMPTY, LAST_TURN, hands=((), ("domino-1",)))
    state = replace(state, set_points=points, scores=points, **options)
    events, state = play(state, c.PlacePiece(GOLD_SEAT, "domino-1", squares((1, 0), (2, 0))))
    if state.phase == "phase2_move":
        more, state = play(state, c.MoveMarker(GOLD_SEAT, squares((0, 0))[0], squares((0, 1))[0]))
        events += more
    return events, state


def test_when_just_one_game_is_played_the_higher_score_wins_and_equal_scores_draw() -> None:
    _, state = finish_set((7, 5))
    assert state.winners == (SILVER_SEAT,)
    _, state = finish_set((5, 5))
    assert state.winners == (SILVER_SEAT, GOLD_SEAT)


def test_with_several_sets_the_players_change_colours_and_play_the_next_set() -> None:
    events, state = finish_set((7, 5), sets=2)
    (started,) = of_type(events, e.SetStarted)
    assert isinstance(started, e.SetStarted)
    assert (started.set_number, started.silver_seat, started.gold_seat) == (
        2,
        GOLD_SEAT,
        SILVER_SEAT,
    )
    assert state.phase == "setup"
    assert state.current == GOLD_SEAT
    assert state.scores == (7, 5)
    assert state.set_points == (0, 0)


def test_rule_1_more_total_points_wins() -> None:
    _, state = finish_set((3, 9), sets=2, set_number=2, set_results=((10, 1),), sets_won=(1, 0))
    assert state.scores == (3, 9)
    assert state.winners == (GOLD_SEAT,)


def test_rule_2_more_winning_sets_wins() -> None:
    _, state = finish_set(
        (3, 2),
        sets=3,
        set_number=3,
        set_results=((10, 1), (0, 30)),
        sets_won=(1, 1),
        competition="sets",
    )
    assert state.sets_won == (2, 1)
    assert state.winners == (SILVER_SEAT,)


def test_a_whole_four_set_game_of_bots_adds_up() -> None:
    log, state = play_game("four sets", ["greedy", "random"], sets=4, competition="points")
    results = [ev for ev in log if isinstance(ev, e.SetEnded)]
    assert [r.set_number for r in results] == [1, 2, 3, 4]
    assert list(state.scores) == [sum(r.scores[seat] for r in results) for seat in (0, 1)]
    silver = [ev.silver_seat for ev in log if isinstance(ev, e.SetStarted)]
    assert silver == [0, 1, 0, 1]
