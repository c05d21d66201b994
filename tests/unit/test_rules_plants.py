"""Steps B and C 1: placing a plant and scoring it (English online rules, "B:" and "C: 1)";
rulings page, rulings 3 and 5).

Mary plays orange (seat 0) and Frank black (seat 2), as in the rule book's examples. Area J is a
4-space area::

    x: 13   17
      .....     y = 4
      .JJJ.     y = 5
      .J##.     y = 6
"""

from __future__ import annotations

import pytest
from helpers import (
    XY,
    domino,
    new_game,
    of_type,
    place,
    plant,
    plant_of,
    ready_to_plant,
    run,
    with_hand,
    with_plants,
    with_sketch,
)

from renature import commands as c
from renature import events as e
from renature.errors import IllegalPlant, WrongPhase
from renature.scoring import plant_points
from renature.state import GameState

MARY, FRANK = 0, 2
ORANGE_BUSH = 1  # slot of the orange bush on Mary's player board


def plant_scores(
    state: GameState, seat: int, domino_at: tuple[XY, XY] | list[XY], where: XY, what: str
) -> tuple[int, GameState]:
    """Play step B for ``seat`` (domino already on ``domino_at``): the points and the state."""
    first, second = domino_at
    state = ready_to_plant(state, seat, first, second)
    events, state = run(state, plant(seat, where, what))
    (placed,) = of_type(events, e.PlantPlaced)
    return placed.points, state


def test_plant_points_example_a_to_d() -> None:
    state = new_game()

    # a) In an empty 4-space area, Mary places a bush and scores 1 point.
    points, state = plant_scores(state, MARY, [(13, 4), (13, 5)], (14, 5), "orange bush")
    assert points == 1
    # b) Frank places a turf in the same area and scores 1 point (not for the higher bush).
    points, state = plant_scores(state, FRANK, [(13, 6), (13, 7)], (14, 6), "black turf")
    assert points == 1
    # c) Frank places a bush and scores 3 points (itself, the orange bush and his turf).
    points, state = plant_scores(state, FRANK, [(16, 4), (17, 4)], (16, 5), "black bush")
    assert points == 3
    # d) Mary places a neutral pine in that area and scores 4 points.
    points, state = plant_scores(state, MARY, [(14, 4), (15, 4)], (15, 5), "neutral pine")
    assert points == 4

    assert [seat.score for seat in state.seats] == [4 + 1 + 4, 3, 2 + 1 + 3]


def test_plant_points_count_plants_of_equal_value_and_of_every_colour() -> None:
    state = with_plants(
        new_game(),
        {(14, 5): "blue pine", (16, 5): "neutral pine", (14, 6): "black oak"},
    )

    assert plant_points(state, state.board.index(15, 5), plant_of("orange pine")) == (3, 2)
    assert plant_points(state, state.board.index(15, 5), plant_of("orange turf")) == (1, 0)


def test_the_plant_comes_from_the_player_board_and_its_points_are_scored() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))
    before = state.seats[MARY]

    events, after = run(state, plant(MARY, (14, 5), "orange bush"))

    (placed,) = of_type(events, e.PlantPlaced)
    assert (placed.x, placed.y, placed.area, placed.value) == (14, 5, "J", 2)
    assert after.plants[after.board.index(14, 5)] == plant_of("orange bush")
    assert after.seats[MARY].plants[ORANGE_BUSH] == before.plants[ORANGE_BUSH] - 1
    assert after.seats[MARY].score == before.score + 1


def test_a_plant_may_be_neutral() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))

    _, after = run(state, plant(MARY, (14, 5), "neutral oak"))

    assert after.plants[after.board.index(14, 5)] == plant_of("neutral oak")


def test_a_plant_of_another_players_colour_is_rejected() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))

    with pytest.raises(IllegalPlant, match="own colour"):
        run(state, plant(MARY, (14, 5), "black bush"))


def test_a_plant_no_longer_on_the_player_board_cannot_be_placed() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))
    state = run(state, plant(MARY, (14, 5), "orange oak"))[1]  # Mary's only orange oak
    state = ready_to_plant(state, MARY, (16, 4), (17, 4))

    with pytest.raises(IllegalPlant, match="no orange oak left"):
        run(state, plant(MARY, (16, 5), "orange oak"))


def test_a_plant_must_go_beside_the_domino_placed_this_turn() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))

    with pytest.raises(IllegalPlant, match="beside the domino"):
        run(state, plant(MARY, (16, 5), "orange bush"))


def test_a_plant_must_go_on_a_free_area_space() -> None:
    state = with_plants(new_game(), {(14, 5): "black turf"})
    state = ready_to_plant(state, MARY, (13, 4), (13, 5))

    with pytest.raises(IllegalPlant, match="already a plant"):
        run(state, plant(MARY, (14, 5), "orange bush"))
    with pytest.raises(IllegalPlant, match="not an area space"):
        run(state, plant(MARY, (12, 4), "orange bush"))  # brook beside the domino
    with pytest.raises(IllegalPlant, match="not on the board"):
        run(state, plant(MARY, (200, 5), "orange bush"))


def test_a_plant_needs_a_domino_placed_first() -> None:
    state = new_game()

    with pytest.raises(WrongPhase, match="Place a domino first"):
        run(state, plant(MARY, (5, 2), "orange bush"))
    with pytest.raises(WrongPhase):
        run(state, c.SkipPlant(MARY))


def test_no_plant_follows_a_discard() -> None:
    state = new_game()
    discard = c.DiscardDomino(MARY, state.seats[MARY].hand[0])

    events, after = run(state, discard)

    assert after.phase == "end_of_turn"
    assert not of_type(events, e.PlantPlaced)
    with pytest.raises(WrongPhase):
        run(after, plant(MARY, (5, 2), "orange bush"))


def test_placing_a_plant_is_optional() -> None:
    state = with_hand(new_game(), MARY, domino("owl", "frog"))
    state = run(state, place(MARY, "owl", (4, 2), "frog", (4, 1)))[1]
    assert state.phase == "place_plant"

    events, after = run(state, c.SkipPlant(MARY))

    assert of_type(events, e.PlantSkipped)
    assert after.phase == "end_of_turn"
    assert after.plants == state.plants
    assert after.seats[MARY].plants == state.seats[MARY].plants


def test_only_one_plant_per_turn() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))
    state = run(state, plant(MARY, (14, 5), "orange turf"))[1]

    with pytest.raises(WrongPhase, match="one plant only"):
        run(state, plant(MARY, (12, 5), "orange turf"))


def test_a_plant_in_the_area_the_domino_just_closed_scores_before_the_area_is_scored() -> None:
    # Area H (one space) is closed by Mary's domino on (5, 6)-(5, 7); she plants a turf in it:
    # 1 plant point, then the area is scored with the turf counted (sole colour: main 1 +
    # minor 0).
    state = with_sketch(
        new_game(),
        """
        .b.
        bH#
        ..#
        """,
        at=(4, 4),
    )
    state = ready_to_plant(state, MARY, (5, 6), (5, 7))

    events, after = run(state, plant(MARY, (5, 5), "orange turf"))

    (placed,) = of_type(events, e.PlantPlaced)
    (scored,) = of_type(events, e.AreaScored)
    assert placed.points == 1
    assert scored.area == "H"
    assert scored.totals == {"orange": 1}
    assert [(a.seat, a.points) for a in scored.awards] == [(MARY, 1)]
    assert events.index(placed) < events.index(scored)
    assert after.seats[MARY].score == 4 + 1 + 1
