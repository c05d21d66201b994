"""Clouds: taking them from area spaces, and the three cloud actions (English online rules,
"B:" and "Cloud actions"; rulings page, rulings 4, 9 and 10).

Mary plays orange (seat 0), Frank black (seat 2). The area space (9, 5) of area I is printed with
2 clouds; Mary's domino lies on (9, 4)-(10, 4) right above it::

    x: 8   12
       .bb..      y = 4
       .IIII      y = 5   (9, 5) holds 2 clouds
"""

from __future__ import annotations

import pytest
from helpers import (
    animal,
    area,
    domino,
    neutral_slot,
    new_game,
    of_type,
    own_slot,
    place,
    plant,
    plant_of,
    ready_to_plant,
    run,
    with_clouds,
    with_hand,
    with_plants,
    with_seat,
    with_sketch,
    with_turn,
    without_token,
)

from renature import commands as c
from renature import events as e
from renature.errors import IllegalCloudAction, NotEnoughClouds, NotYourTurn, WrongPhase
from renature.rules import legal_actions
from renature.scoring import area_awards
from renature.state import GameState

MARY, FRANK = 0, 2
CLOUD_SPACE = (9, 5)


def mary_plants_on_the_cloud_space(clouds_held: int) -> tuple[e.PlantPlaced, GameState, int]:
    state = with_clouds(new_game(), MARY, clouds_held)
    state = ready_to_plant(state, MARY, (9, 4), (10, 4))
    box = state.box_clouds
    events, after = run(state, plant(MARY, CLOUD_SPACE, "orange turf"))
    (placed,) = of_type(events, e.PlantPlaced)
    return placed, after, box


def joker(name: str) -> c.CloudAction:
    return c.CloudAction(MARY, "change_joker", animal=name)


def return_plant(seat: int, x: int, y: int) -> c.CloudAction:
    return c.CloudAction(seat, "return_plant", cell=c.Cell(x, y))


EXTRA_TURN = c.CloudAction(MARY, "extra_turn")


# --- clouds on area spaces (ruling 4) -----------------------------------------------------------


def test_the_clouds_on_an_area_space_go_to_the_player_who_plants_there() -> None:
    placed, after, box = mary_plants_on_the_cloud_space(clouds_held=3)

    assert (placed.clouds_taken, placed.clouds_returned) == (2, 0)
    assert after.seats[MARY].clouds == 5
    assert after.clouds[after.board.index(*CLOUD_SPACE)] == 0
    assert after.box_clouds == box


def test_clouds_beyond_the_free_cloud_spaces_go_back_to_the_box() -> None:
    placed, after, box = mary_plants_on_the_cloud_space(clouds_held=5)

    assert (placed.clouds_taken, placed.clouds_returned) == (1, 1)
    assert after.seats[MARY].clouds == 6
    assert after.box_clouds == box + 1
    assert after.clouds[after.board.index(*CLOUD_SPACE)] == 0


def test_a_player_with_a_full_cloud_board_gets_none_of_the_clouds() -> None:
    placed, after, box = mary_plants_on_the_cloud_space(clouds_held=6)

    assert (placed.clouds_taken, placed.clouds_returned) == (0, 2)
    assert after.seats[MARY].clouds == 6
    assert after.box_clouds == box + 2


def test_a_player_makes_room_with_a_cloud_action_before_planting_to_keep_the_clouds() -> None:
    state = ready_to_plant(new_game(), MARY, (9, 4), (10, 4))  # Mary holds 6 clouds

    events, after = run(state, joker("owl"), plant(MARY, CLOUD_SPACE, "orange turf"))

    (placed,) = of_type(events, e.PlantPlaced)
    assert placed.clouds_taken == 2
    assert after.seats[MARY].clouds == 6 - 2 + 2


def test_clouds_are_taken_by_planting_not_by_placing_a_domino_beside_them() -> None:
    state = with_hand(new_game(), MARY, domino("owl", "frog"))
    state = with_sketch(state, ".b", at=(8, 4))

    events, after = run(state, place(MARY, "owl", (10, 4), "frog", (11, 4)), c.SkipPlant(MARY))

    assert after.clouds[after.board.index(*CLOUD_SPACE)] == 2
    assert after.seats[MARY].clouds == 6
    assert of_type(events, e.DominoPlaced)[0].clouds_taken == 0


# --- change the joker ----------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["place_domino", "place_plant", "end_of_turn"])
def test_changing_the_joker_costs_2_clouds_at_any_time_in_the_turn(phase: str) -> None:
    state = with_turn(new_game(), MARY, phase)
    box = state.box_clouds

    events, after = run(state, joker("owl"))

    (changed,) = of_type(events, e.JokerChanged)
    assert (changed.from_animal, changed.to_animal, changed.cost) == ("butterfly", "owl", 2)
    assert after.joker == animal("owl")
    assert after.seats[MARY].clouds == 4
    assert after.box_clouds == box + 2
    assert after.phase == phase


def test_changing_the_joker_must_move_it_to_another_animal() -> None:
    with pytest.raises(IllegalCloudAction, match="joker already"):
        run(new_game(), joker("butterfly"))


def test_changing_the_joker_needs_2_clouds() -> None:
    state = with_clouds(new_game(), MARY, 1)

    with pytest.raises(NotEnoughClouds):
        run(state, joker("owl"))


def test_cloud_actions_only_on_ones_own_turn() -> None:
    state = new_game()

    with pytest.raises(NotYourTurn):
        run(state, c.CloudAction(FRANK, "change_joker", animal="owl"))
    assert legal_actions(state, FRANK) == []


# --- another turn --------------------------------------------------------------------------------


def test_another_turn_costs_3_clouds_and_starts_again_at_step_a() -> None:
    state = with_turn(new_game(), MARY, "end_of_turn")
    box = state.box_clouds

    events, after = run(state, EXTRA_TURN)

    (taken,) = of_type(events, e.ExtraTurnTaken)
    assert taken.cost == 3
    assert (after.current, after.phase, after.placed) == (MARY, "place_domino", ())
    assert after.turn == state.turn + 1
    assert after.seats[MARY].clouds == 3
    assert after.box_clouds == box + 3


@pytest.mark.parametrize("phase", ["place_domino", "place_plant"])
def test_another_turn_is_only_taken_at_the_end_of_the_turn(phase: str) -> None:
    state = with_turn(new_game(), MARY, phase)

    with pytest.raises(WrongPhase, match="end of your turn"):
        run(state, EXTRA_TURN)
    assert EXTRA_TURN not in legal_actions(state, MARY)


def test_another_turn_needs_3_clouds() -> None:
    state = with_clouds(with_turn(new_game(), MARY, "end_of_turn"), MARY, 2)

    with pytest.raises(NotEnoughClouds):
        run(state, EXTRA_TURN)
    assert EXTRA_TURN not in legal_actions(state, MARY)


def test_another_turn_needs_a_domino_in_hand() -> None:
    state = with_hand(with_turn(new_game(), MARY, "end_of_turn"), MARY)

    with pytest.raises(IllegalCloudAction, match="no domino"):
        run(state, EXTRA_TURN)
    assert EXTRA_TURN not in legal_actions(state, MARY)


def test_extra_turns_chain_while_the_player_can_pay_3_clouds_for_each() -> None:
    state = new_game()
    first, second, third = state.seats[MARY].hand

    events, after = run(
        state,
        c.DiscardDomino(MARY, first),
        EXTRA_TURN,
        c.DiscardDomino(MARY, second),
        EXTRA_TURN,
        c.DiscardDomino(MARY, third),
    )

    assert len(of_type(events, e.ExtraTurnTaken)) == 2
    assert len(of_type(events, e.DominoDrawn)) == 3  # step D in every turn
    assert after.seats[MARY].clouds == 0
    # With no clouds left, nothing more can be done: the turn passes on by itself.
    (ended,) = of_type(events, e.TurnEnded)
    assert ended.next_seat == 1
    assert after.current == 1


# --- return a plant ------------------------------------------------------------------------------


def test_returning_a_plant_costs_its_value_and_puts_it_back_on_the_player_board() -> None:
    state = with_plants(new_game(), {(14, 5): "orange oak"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 0, 2, 1, 1, 1))  # her oak is out
    box = state.box_clouds

    events, after = run(state, return_plant(MARY, 14, 5))

    (returned,) = of_type(events, e.PlantReturned)
    assert (returned.colour, returned.plant, returned.cost, returned.area) == (
        "orange",
        "oak",
        4,
        "J",
    )
    assert after.plants[after.board.index(14, 5)] == -1
    assert after.seats[MARY].plants[own_slot("oak")] == 1
    assert after.seats[MARY].clouds == 2
    assert after.box_clouds == box + 4


def test_any_neutral_plant_may_be_returned_whoever_placed_it() -> None:
    state = with_plants(new_game(), {(14, 5): "neutral turf"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 1, 1, 1, 1))

    _, after = run(state, return_plant(MARY, 14, 5))

    assert after.seats[MARY].plants[neutral_slot("turf")] == 2
    assert after.seats[MARY].clouds == 5


def test_a_plant_of_another_players_colour_cannot_be_returned() -> None:
    state = with_plants(new_game(), {(14, 5): "black turf"})

    with pytest.raises(IllegalCloudAction, match="your colour or neutral"):
        run(state, return_plant(MARY, 14, 5))


def test_a_plant_can_only_be_returned_to_a_free_space_on_the_player_board() -> None:
    state = with_plants(new_game(), {(14, 5): "orange turf"})  # Mary's 5 turf spaces are full

    with pytest.raises(IllegalCloudAction, match="no free space"):
        run(state, return_plant(MARY, 14, 5))


def test_returning_a_plant_needs_as_many_clouds_as_its_value() -> None:
    state = with_plants(new_game(), {(14, 5): "neutral pine"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 2, 1, 0, 1), clouds=2)

    with pytest.raises(NotEnoughClouds):
        run(state, return_plant(MARY, 14, 5))


def test_there_must_be_a_plant_to_return() -> None:
    with pytest.raises(IllegalCloudAction, match="no plant"):
        run(new_game(), return_plant(MARY, 14, 5))
    with pytest.raises(IllegalCloudAction, match="not on the board"):
        run(new_game(), return_plant(MARY, 200, 5))


def test_a_plant_may_be_returned_from_an_area_already_scored() -> None:
    state = without_token(with_plants(new_game(), {(5, 5): "neutral turf"}), "H")
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 1, 1, 1, 1))

    _, after = run(state, return_plant(MARY, 5, 5))

    assert after.plants[after.board.index(5, 5)] == -1


@pytest.mark.parametrize("phase", ["place_domino", "place_plant", "end_of_turn"])
def test_a_plant_may_be_returned_at_any_time_in_the_turn(phase: str) -> None:
    state = with_plants(with_turn(new_game(), MARY, phase), {(14, 5): "neutral turf"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 1, 1, 1, 1))

    _, after = run(state, return_plant(MARY, 14, 5))

    assert after.phase == phase


def test_a_returned_plant_no_longer_counts_for_its_area() -> None:
    # Area N holds Mary's turf and a neutral pine. With the pine, neutral ranks first and Mary
    # only scores the minor points; once she has returned it, she is the sole colour.
    state = with_plants(new_game(), {(5, 9): "orange turf", (5, 10): "neutral pine"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 2, 1, 0, 1))
    n = area(state, "N")
    assert [(a.seat, a.points) for a in area_awards(state, n, 4, 2)[2]] == [(MARY, 2)]

    _, after = run(state, return_plant(MARY, 5, 10))

    totals, _, awards = area_awards(after, n, 4, 2)
    assert totals == {"orange": 1}
    assert [(a.seat, a.points) for a in awards] == [(MARY, 6)]


def test_with_4_players_the_icon_space_is_not_free_for_a_returned_neutral_turf() -> None:
    # 4 players: one neutral turf space carries the 4-player icon and stays empty, so a player
    # board holding its one usable neutral turf has no free space for another.
    state = with_plants(new_game(players=4), {(14, 5): "neutral turf"})
    assert state.seats[MARY].plants[neutral_slot("turf")] == 1

    with pytest.raises(IllegalCloudAction, match="no free space"):
        run(state, return_plant(MARY, 14, 5))


def test_with_3_players_the_same_return_finds_the_second_neutral_turf_space_free() -> None:
    state = with_plants(new_game(players=3), {(14, 5): "neutral turf"})
    state = with_seat(state, MARY, plants=(5, 3, 2, 1, 1, 1, 1, 1))

    _, after = run(state, return_plant(MARY, 14, 5))

    assert after.seats[MARY].plants[neutral_slot("turf")] == 2
    assert after.plants[after.board.index(14, 5)] == -1
    assert plant_of("neutral turf") not in after.plants
