"""Step C 2: closing areas and area scoring (English online rules, "C: 2)" and the yellow-framed
area scoring; rulings page, rulings 6 and 7).

Mary plays orange (seat 0) and Frank black (seat 2), as in the rule book's examples. Most tests
close area N, a 4-space area (token: main 4, minor 2). Its brook is covered all round except
(4, 9) and (4, 10), where the closing domino goes::

    x: 3    8
       .oooo.     y = 8
       M.NNNo     y = 9
       M.N##@     y = 10
"""

from __future__ import annotations

from helpers import (
    AREA_N,
    area,
    awards,
    close_area_n,
    domino,
    new_game,
    of_type,
    place,
    run,
    with_hand,
    with_plants,
    with_sketch,
    without_token,
)

from renature import commands as c
from renature import events as e
from renature.areas import is_closed, is_isolated
from renature.scoring import area_awards

MARY, FRANK = 0, 2


def test_area_scoring_example_1_tied_colours_cancel_and_the_sole_colour_takes_main_and_minor() -> (
    None
):
    # Mary: 1 bush (2). Frank: 1 bush + 1 turf (3). Neutral: 1 pine (3). Black and neutral tie
    # and are treated as not present; orange is the only colour: Mary scores 4 + 2 = 6 and
    # takes the area token because she closed the area.
    events, after = close_area_n(
        {
            (5, 9): "orange bush",
            (6, 9): "black bush",
            (7, 9): "black turf",
            (5, 10): "neutral pine",
        }
    )

    (scored,) = of_type(events, e.AreaScored)
    assert scored.area == "N"
    assert (scored.main, scored.minor) == (4, 2)
    assert scored.totals == {"orange": 2, "black": 3, "neutral": 3}
    assert sorted(scored.cancelled) == ["black", "neutral"]
    assert awards(scored) == [(MARY, 6)]
    assert after.seats[MARY].score == 4 + 6
    assert after.seats[MARY].tokens == (scored.token,)
    assert after.area_tokens[area(after, "N")] is None


def test_area_scoring_example_2_neutral_highest_and_a_player_second_scores_the_minor_points() -> (
    None
):
    # Neutral has the highest total and Frank the second highest: Frank gains the minor 2
    # points; neutral's main points are not scored, nor is third place (Mary).
    events, after = close_area_n(
        {
            (5, 9): "neutral oak",
            (6, 9): "black bush",
            (7, 9): "black turf",
            (5, 10): "orange turf",
        }
    )

    (scored,) = of_type(events, e.AreaScored)
    assert scored.totals == {"orange": 1, "black": 3, "neutral": 4}
    assert scored.cancelled == []
    assert awards(scored) == [(FRANK, 2)]
    assert after.seats[FRANK].score == 2 + 2
    assert after.seats[MARY].score == 4
    assert after.seats[MARY].tokens == (scored.token,)  # Mary closed it


def test_the_highest_player_colour_scores_the_main_points_and_the_second_the_minor_points() -> None:
    events, after = close_area_n({(5, 9): "orange oak", (6, 9): "black pine"})

    (scored,) = of_type(events, e.AreaScored)
    assert awards(scored) == [(MARY, 4), (FRANK, 2)]
    assert [seat.score for seat in after.seats] == [4 + 4, 3, 2 + 2]


def test_a_player_ahead_of_neutral_is_not_a_sole_colour_and_takes_the_main_points_only() -> None:
    events, _ = close_area_n({(5, 9): "orange oak", (6, 9): "neutral bush"})

    (scored,) = of_type(events, e.AreaScored)
    assert awards(scored) == [(MARY, 4)]


def test_there_are_no_points_for_third_place() -> None:
    events, _ = close_area_n({(5, 9): "orange oak", (6, 9): "black pine", (7, 9): "neutral turf"})
    no_third, _ = close_area_n({(5, 9): "neutral oak", (6, 9): "black pine", (7, 9): "orange turf"})

    assert awards(of_type(events, e.AreaScored)[0]) == [(MARY, 4), (FRANK, 2)]
    assert awards(of_type(no_third, e.AreaScored)[0]) == [(FRANK, 2)]


def test_three_equal_totals_all_cancel_and_nothing_is_scored() -> None:
    events, after = close_area_n(
        {(5, 9): "orange bush", (6, 9): "black bush", (7, 9): "neutral bush"}
    )

    (scored,) = of_type(events, e.AreaScored)
    assert sorted(scored.cancelled) == ["black", "neutral", "orange"]
    assert scored.awards == []
    assert [seat.score for seat in after.seats] == [4, 3, 2]


def test_a_neutral_colour_alone_scores_nothing() -> None:
    events, _ = close_area_n({(5, 9): "neutral oak", (6, 9): "orange bush", (7, 9): "black bush"})

    (scored,) = of_type(events, e.AreaScored)
    assert sorted(scored.cancelled) == ["black", "orange"]
    assert scored.awards == []


def test_an_empty_area_scores_nothing_but_the_closer_still_takes_its_token() -> None:
    events, after = close_area_n({})

    (scored,) = of_type(events, e.AreaScored)
    assert scored.totals == {}
    assert scored.awards == []
    assert after.seats[MARY].tokens == (scored.token,)


def test_the_closer_takes_the_token_even_when_another_player_scores_the_area() -> None:
    events, after = close_area_n({(5, 9): "orange bush"}, closer=FRANK)

    (scored,) = of_type(events, e.AreaScored)
    assert scored.seat == FRANK
    assert awards(scored) == [(MARY, 6)]
    assert after.seats[FRANK].tokens == (scored.token,)
    assert after.seats[MARY].tokens == ()


def test_an_area_is_not_closed_while_a_free_brook_space_beside_it_can_still_take_a_domino() -> None:
    state = with_sketch(new_game(), AREA_N, at=(3, 8))

    assert not is_closed(state, area(state, "N"))
    assert not is_isolated(state, state.board.index(4, 9))


def test_a_diagonally_adjacent_free_brook_space_does_not_keep_an_area_open() -> None:
    # Area H is one space. Mary covers (5, 6) below it; (4, 4), (6, 4) and (4, 6) are only
    # diagonal to it and stay free, yet H is closed off.
    state = with_sketch(
        new_game(),
        """
        .b.
        bH#
        ..#
        ..b
        """,
        at=(4, 4),
    )
    state = with_hand(state, MARY, domino("owl", "frog"))
    assert not is_closed(state, area(state, "H"))

    events, after = run(state, place(MARY, "owl", (5, 6), "frog", (5, 7)), c.SkipPlant(MARY))

    assert is_closed(after, area(after, "H"))
    assert [scored.area for scored in of_type(events, e.AreaScored)] == ["H"]
    for x, y in [(4, 4), (6, 4), (4, 6)]:
        assert after.cover[after.board.index(x, y)] < 0


def test_a_free_brook_space_with_no_free_brook_space_beside_it_is_isolated_and_closes_the_area() -> (  # noqa: E501  # the name is the sentence it proves
    None
):
    # (5, 6) is the last free brook space beside area H. Covering (5, 7) leaves it without a free
    # neighbour: no domino can ever cover it, so H is closed off and scored.
    state = with_sketch(
        new_game(),
        """
        .b.
        bH#
        b.#
        b..
        """,
        at=(4, 4),
    )
    state = with_plants(state, {(5, 5): "black pine"})
    state = with_hand(state, MARY, domino("owl", "frog"))
    below_h = state.board.index(5, 6)
    assert not is_isolated(state, below_h)

    events, after = run(state, place(MARY, "owl", (5, 7), "frog", (6, 7)), c.SkipPlant(MARY))

    assert after.cover[below_h] < 0
    assert is_isolated(after, below_h)
    (scored,) = of_type(events, e.AreaScored)
    assert (scored.area, scored.seat) == ("H", MARY)
    assert awards(scored) == [(FRANK, 1 + 0)]  # a sole colour: main 1 + minor 0


def test_one_domino_closing_two_areas_scores_each_separately_and_the_closer_takes_both_tokens() -> (
    None
):
    # The domino on (13, 2)-(13, 3) closes area C (8 spaces: main 8, minor 4) and area D
    # (3 spaces: main 3, minor 1).
    state = with_sketch(
        new_game(),
        """
        bC###...#
        bC###.###
        bC##C.D##
        bCCCC.DD#
        .bbbbbbb.
        """,
        at=(8, 0),
    )
    state = with_plants(
        state, {(9, 2): "orange turf", (14, 2): "black pine", (15, 3): "orange turf"}
    )
    state = with_hand(state, MARY, domino("owl", "frog"))

    events, after = run(state, place(MARY, "frog", (13, 2), "owl", (13, 3)), c.SkipPlant(MARY))

    scored = {s.area: s for s in of_type(events, e.AreaScored)}
    assert sorted(scored) == ["C", "D"]
    assert awards(scored["C"]) == [(MARY, 8 + 4)]
    assert awards(scored["D"]) == [(FRANK, 3), (MARY, 1)]
    assert all(s.seat == MARY for s in scored.values())
    taken = [scored["C"].token, scored["D"].token]
    assert sorted(after.seats[MARY].tokens) == sorted(t for t in taken if t is not None)
    assert None not in taken
    assert after.seats[MARY].score == 4 + 12 + 1
    assert after.seats[FRANK].score == 2 + 3


def test_an_area_whose_token_is_gone_is_not_scored_again() -> None:
    state = without_token(with_sketch(new_game(), AREA_N, at=(3, 8)), "N")
    state = with_plants(state, {(5, 9): "orange oak"})
    state = with_hand(state, MARY, domino("owl", "owl"))

    events, after = run(state, place(MARY, "owl", (4, 9), "owl", (4, 10)), c.SkipPlant(MARY))

    assert is_closed(after, area(after, "N"))
    assert of_type(events, e.AreaScored) == []
    assert after.seats[MARY].score == 4


def test_area_scoring_happens_at_the_end_of_step_c_after_the_plant() -> None:
    # Mary closes N and plants a turf in area M beside her domino; N is scored after the plant.
    state = with_sketch(new_game(), AREA_N, at=(3, 8))
    state = with_plants(state, {(5, 9): "black turf"})
    state = with_hand(state, MARY, domino("owl", "owl"))

    events, _ = run(
        state,
        place(MARY, "owl", (4, 9), "owl", (4, 10)),
        c.PlacePlant(MARY, c.Cell(3, 9), "orange", "turf"),
    )

    kinds = [type(ev) for ev in events]
    assert kinds.index(e.PlantPlaced) < kinds.index(e.AreaScored)


def test_area_awards_give_points_only_to_player_colours() -> None:
    state = with_plants(new_game(), {(5, 9): "neutral oak", (6, 9): "blue pine"})

    totals, cancelled, given = area_awards(state, area(state, "N"), 4, 2)

    assert totals == {"blue": 3, "neutral": 4}
    assert cancelled == []
    assert [(a.seat, a.colour, a.points) for a in given] == [(1, "blue", 2)]
