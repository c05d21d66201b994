"""The Valley expansion (English and German online rules, "Expansion Valley"; rulings page,
"Valley expansion"): meadow, ponds, tree stumps and mushrooms, meadow clouds, no area scoring
during play, final scoring by area size, the tie break on the largest area, and the variant on
the back of the board.

Mary plays orange (seat 0), Paul blue (seat 1), Frank black (seat 2). The front of the Valley
board from x = 8 to 18 (``valley.toml``)::

    I.JJ##.KLLM      y = 3      J: (10, 3) (11, 3) (11, 4) (12, 4) (13, 4)
    I.#JJJ.K.MM      y = 4      the dead-end lane (16, 4) touches K, L and M
    .^....*....      y = 5      stump (9, 5); (11, 5) touches J and R; cloud (14, 5)
    #.RRR#.SSS#      y = 6      R: (10, 6) (11, 6) (12, 6) (11, 7) (12, 7)
    Q.#RR#.#SSS      y = 7

The right edge (N 3, T 4, b 3 and g 3 spaces) is drawn in test_valley_board.py.
"""

from __future__ import annotations

import pytest
from helpers import (
    awards,
    clouds_in_game,
    domino,
    finish,
    new_game,
    of_type,
    place,
    plant,
    plant_of,
    plants_in_game,
    ready_to_plant,
    run,
    with_plants,
    with_seat,
)
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.areas import is_closed
from renature.board import AREA, PATH
from renature.components import COLOURS, components
from renature.errors import IllegalMushroom, NotYourTurn, WrongPhase
from renature.game import play, replay
from renature.rules import decide, evolve, legal_actions
from renature.state import GameState
from renature.view import view

MARY, PAUL, FRANK = 0, 1, 2
XY = tuple[int, int]


# --- positions -------------------------------------------------------------------------------


def valley(players: int = 3, board: str = "valley") -> GameState:
    """A started Valley game: Mary (seat 0) is about to place a domino."""
    return new_game(players, board=board)


def at(state: GameState, x: int, y: int) -> int:
    return state.board.index(x, y)


def area_index(state: GameState, area_id: str) -> int:
    return state.board.area_ids.index(area_id)


def area_id_at(state: GameState, x: int, y: int) -> str:
    return state.board.area_ids[state.area_of[at(state, x, y)]]


def lay(state: GameState, animals: dict[XY, str]) -> GameState:
    """Animals of earlier turns on the meadow; a cloud printed there went to the box then."""
    cover, clouds, box = list(state.cover), list(state.clouds), state.box_clouds
    for (x, y), name in animals.items():
        here = at(state, x, y)
        assert state.board.kinds[here] == PATH, f"({x}, {y}) is not a meadow space"
        assert state.area_of[here] < 0, f"({x}, {y}) holds a mushroom"
        cover[here] = components().animal(name)
        box += clouds[here]
        clouds[here] = 0
    return replace(state, cover=tuple(cover), clouds=tuple(clouds), box_clouds=box)


def holding_clouds(state: GameState, seat: int, clouds: int) -> GameState:
    """The seat holds ``clouds`` clouds; the others went to the box (or came from it)."""
    box = state.box_clouds + state.seats[seat].clouds - clouds
    return replace(with_seat(state, seat, clouds=clouds), box_clouds=box)


def cover(
    state: GameState, seat: int, first: XY, second: XY, anchor: XY
) -> tuple[list[e.Event], GameState]:
    """``seat`` places the frog-heron domino on ``first`` and ``second``, beside a butterfly
    (the joker) left on ``anchor`` by an earlier turn."""
    state = lay(state, {anchor: "butterfly"})
    state = with_seat(state, seat, hand=(domino("frog", "heron"),))
    state = replace(state, current=seat, phase="place_domino", placed=())
    return run(state, place(seat, "frog", first, "heron", second))


def cover_the_stump(state: GameState, seat: int = MARY) -> tuple[list[e.Event], GameState]:
    """``seat`` covers the stump (9, 5), domino on (9, 5)-(10, 5) beside a joker on (8, 5)."""
    return cover(state, seat, (9, 5), (10, 5), anchor=(8, 5))


def mushroom(seat: int, x: int, y: int) -> c.PlaceMushroom:
    return c.PlaceMushroom(seat, c.Cell(x, y))


def joined_earlier(state: GameState, *spaces: XY) -> GameState:
    """Mushrooms placed on earlier turns (each one through the real PlaceMushroom)."""
    for x, y in spaces:
        left = state.mushrooms_left - 1
        gained = replace(state, phase="place_mushroom", current=MARY, mushrooms_left=left)
        state = replace(run(gained, mushroom(MARY, x, y))[1], phase="place_domino", placed=())
    return state


def mushroom_spaces(state: GameState) -> set[XY]:
    """Free meadow spaces orthogonally beside an area space, computed from the board."""
    board = state.board
    return {
        board.xy(cell)
        for cell in board.cells
        if board.kinds[cell] == PATH
        and state.cover[cell] < 0
        and state.area_of[cell] < 0
        and any(state.area_of[n] >= 0 for n in board.neighbours[cell])
    }


# --- tree stumps and mushrooms ---------------------------------------------------------------


def test_covering_a_tree_stump_gives_a_mushroom_to_place_at_once_or_decline() -> None:
    events, state = cover_the_stump(valley())

    (placed,) = of_type(events, e.DominoPlaced)
    (gained,) = of_type(events, e.MushroomGained)
    assert placed.stumps_covered == 1
    assert (gained.seat, gained.mushrooms_left) == (MARY, 7)
    assert state.phase == "place_mushroom"
    assert state.mushrooms_left == 7
    legal = legal_actions(state, MARY)
    assert legal[-1] == c.SkipMushroom(MARY)
    places = legal[:-1]
    assert all(isinstance(action, c.PlaceMushroom) for action in places)
    assert {(a.cell.x, a.cell.y) for a in places if isinstance(a, c.PlaceMushroom)} == (
        mushroom_spaces(state)
    )
    assert (11, 5) in mushroom_spaces(state)


def test_a_player_may_decline_the_mushroom_which_stays_in_the_supply() -> None:
    """ "Whenever you cover a stump with a domino, you may immediately take a mushroom token." """
    _, state = cover_the_stump(valley())
    events, state = run(state, c.SkipMushroom(MARY))

    (declined,) = of_type(events, e.MushroomDeclined)
    assert declined.mushrooms_left == 8
    assert state.mushrooms_left == 8
    assert state.phase == "place_plant"
    assert not of_type(events, e.MushroomPlaced)


def test_only_a_player_holding_a_mushroom_can_decline_one() -> None:
    with pytest.raises(WrongPhase):
        decide(valley(), c.SkipMushroom(MARY))


def test_a_domino_off_the_stumps_gives_no_mushroom() -> None:
    events, state = cover(valley(), MARY, (10, 5), (11, 5), anchor=(12, 5))

    assert of_type(events, e.DominoPlaced)[0].stumps_covered == 0
    assert not of_type(events, e.MushroomGained)
    assert (state.phase, state.mushrooms_left) == ("place_plant", 8)


def test_a_mushroom_becomes_an_area_space_joining_the_two_areas_it_touches() -> None:
    state = cover_the_stump(valley())[1]
    j, r = area_index(state, "J"), area_index(state, "R")
    r_spaces = [cell for cell in state.board.cells if state.area_of[cell] == r]

    events, state = run(state, mushroom(MARY, 11, 5))

    (placed,) = of_type(events, e.MushroomPlaced)
    assert (placed.x, placed.y, placed.area, placed.joined) == (11, 5, "J", ["J", "R"])
    assert placed.size == 1 + 5 + 5
    assert state.area_of[at(state, 11, 5)] == j
    assert all(state.area_of[cell] == j for cell in r_spaces)
    assert (state.area_sizes[j], state.area_sizes[r]) == (11, 0)
    assert sum(1 for a in state.area_of if a == j) == 11
    assert state.phase == "place_plant"
    areas = {area.id: area.size for area in view(state, MARY).areas}
    assert areas["J"] == 11
    assert "R" not in areas


def test_a_mushroom_on_a_dead_end_lane_joins_three_areas() -> None:
    state = cover_the_stump(valley())[1]
    sizes = [state.area_sizes[area_index(state, a)] for a in "KLM"]

    events, state = run(state, mushroom(MARY, 16, 4))

    (placed,) = of_type(events, e.MushroomPlaced)
    assert (placed.area, placed.joined) == ("K", ["K", "L", "M"])
    assert placed.size == 1 + sum(sizes) == 8
    assert {area_id_at(state, x, y) for x, y in [(15, 3), (16, 3), (18, 4), (16, 4)]} == {"K"}
    assert [state.area_sizes[area_index(state, a)] for a in "KLM"] == [8, 0, 0]
    areas = {area.id: area.size for area in view(state, None).areas}
    assert areas["K"] == 8
    assert not {"L", "M"} & set(areas)


def test_rule_book_example_a_mushroom_joins_two_joined_areas_into_16_and_an_oak_scores_11() -> None:
    # German rule book: Orange covers the stump with the woodpecker domino and places the
    # mushroom so that an area of 16 spaces forms on the right edge, joining 2 areas that were
    # themselves formed of 2 joined areas; then an oak scores 1 for itself + 10 for the plants
    # of equal or lower value in the area.
    state = joined_earlier(valley(), (21, 5), (21, 11))  # N + T (8) and b + g (7)
    assert [state.area_sizes[area_index(state, a)] for a in ("N", "b")] == [8, 7]
    state = with_plants(
        state,
        {
            (20, 3): "blue turf",
            (21, 3): "black bush",
            (21, 5): "neutral oak",  # on the earlier mushroom
            (21, 6): "orange pine",
            (22, 6): "blue oak",
            (22, 7): "neutral turf",
            (22, 9): "black pine",
            (21, 10): "orange turf",
            (21, 12): "blue bush",
            (22, 13): "neutral pine",
            (23, 1): "blue oak",  # area G, not part of the 16
        },
    )
    state = lay(state, {(19, 8): "woodpecker"})
    state = with_seat(state, MARY, hand=(domino("woodpecker", "woodpecker"),))

    events, state = run(state, place(MARY, "woodpecker", (20, 8), "woodpecker", (21, 8)))
    assert of_type(events, e.MushroomGained)
    events, state = run(state, mushroom(MARY, 22, 8))
    (joined,) = of_type(events, e.MushroomPlaced)
    assert (joined.area, joined.joined, joined.size) == ("N", ["N", "b"], 16)

    events, state = run(state, plant(MARY, (21, 7), "orange oak"))

    (oak,) = of_type(events, e.PlantPlaced)
    assert (oak.area, oak.points) == ("N", 1 + 10)
    assert state.seats[MARY].score == 4 + 11
    assert {area.id: area.size for area in view(state, MARY).areas}["N"] == 16


def test_every_view_shows_where_each_mushroom_stands_and_the_area_it_belongs_to_now() -> None:
    # The board read model is the spectator view: without the mushrooms in it, a spectator
    # (or a frontend) could not tell which meadow spaces hold one.
    state = valley()
    assert view(state, None).mushrooms == []
    state = joined_earlier(state, (21, 5), (21, 11))  # N + T and b + g

    shown = {(m.x, m.y): m.area for m in view(state, None).mushrooms}
    assert shown == {(21, 5): "N", (21, 11): "b"}

    state = lay(state, {(19, 8): "woodpecker"})
    state = with_seat(state, MARY, hand=(domino("woodpecker", "woodpecker"),))
    state = run(state, place(MARY, "woodpecker", (20, 8), "woodpecker", (21, 8)))[1]
    state = run(state, mushroom(MARY, 22, 8))[1]  # joins N and b

    for viewer in (None, MARY, PAUL):
        shown = {(m.x, m.y): m.area for m in view(state, viewer).mushrooms}
        assert shown == {(21, 5): "N", (21, 11): "N", (22, 8): "N"}
    assert view(state, None).mushrooms_left == 8 - 3


def test_a_mushroom_with_no_free_meadow_space_beside_an_area_is_lost() -> None:
    state = valley()
    state = lay(state, dict.fromkeys(mushroom_spaces(state), "butterfly"))
    assert mushroom_spaces(state) == set()

    # The stump (14, 8) and the lane (14, 7) lie beside no area space.
    events, state = cover(state, MARY, (14, 8), (14, 7), anchor=(14, 6))

    kinds = [type(event) for event in events]
    assert kinds == [e.DominoPlaced, e.MushroomGained, e.MushroomLost]
    assert state.phase == "place_plant"
    assert state.mushrooms_left == 7
    legal = legal_actions(state, MARY)
    assert c.SkipPlant(MARY) in legal
    assert not [a for a in legal if isinstance(a, (c.PlaceMushroom, c.PlacePlant))]
    assert run(state, c.SkipPlant(MARY))[1].phase in ("end_of_turn", "place_domino")


def test_the_mushroom_must_be_placed_before_anything_else() -> None:
    state = cover_the_stump(valley())[1]
    assert state.phase == "place_mushroom"

    for command in (
        plant(MARY, (10, 6), "orange turf"),
        c.SkipPlant(MARY),
        c.EndTurn(MARY),
        c.CloudAction(MARY, "change_joker", animal="owl"),
        c.DiscardDomino(MARY, domino("owl", "owl")),
        place(MARY, "owl", (12, 5), "owl", (13, 5)),
    ):
        with pytest.raises(WrongPhase, match="mushroom"):
            decide(state, command)
    with pytest.raises(NotYourTurn):
        decide(state, mushroom(PAUL, 11, 5))


@pytest.mark.parametrize(
    ("x", "y"),
    [
        pytest.param(4, 5, id="a meadow cloud space beside no area space"),
        pytest.param(9, 5, id="the stump just covered"),
        pytest.param(12, 5, id="a meadow space covered on an earlier turn"),
        pytest.param(10, 6, id="an area space"),
        pytest.param(0, 0, id="off the board"),
    ],
)
def test_a_mushroom_goes_on_a_free_meadow_space_beside_an_area_space(x: int, y: int) -> None:
    state = lay(cover_the_stump(valley())[1], {(12, 5): "owl"})

    with pytest.raises(IllegalMushroom, match="free meadow space"):
        decide(state, mushroom(MARY, x, y))


def test_no_mushroom_is_gained_once_the_eight_are_used_up() -> None:
    assert valley().mushrooms_left == 8
    state = replace(valley(), mushrooms_left=1)  # seven placed on earlier turns
    events, state = cover_the_stump(state)
    assert of_type(events, e.MushroomGained)[0].mushrooms_left == 0
    state = run(state, mushroom(MARY, 11, 5))[1]

    events, state = cover(state, PAUL, (14, 2), (15, 2), anchor=(14, 3))

    assert of_type(events, e.DominoPlaced)[0].stumps_covered == 1
    assert not of_type(events, e.MushroomGained)
    assert (state.phase, state.mushrooms_left) == ("place_plant", 0)


def test_a_plant_may_go_on_a_mushroom_and_scores_in_the_joined_area() -> None:
    state = with_plants(valley(), {(10, 6): "blue turf", (11, 4): "black oak"})
    state = run(cover_the_stump(state)[1], mushroom(MARY, 11, 5))[1]

    events, state = run(state, plant(MARY, (11, 5), "orange pine"))

    (placed,) = of_type(events, e.PlantPlaced)
    assert (placed.x, placed.y, placed.area) == (11, 5, "J")
    assert placed.points == 1 + 1  # the blue turf, once in R; not the black oak (higher)
    assert state.plants[at(state, 11, 5)] == plant_of("orange pine")


# --- clouds ----------------------------------------------------------------------------------


def test_covering_a_meadow_cloud_space_takes_its_cloud() -> None:
    state = holding_clouds(valley(), MARY, 2)
    box = state.box_clouds

    events, state = cover(state, MARY, (4, 5), (4, 6), anchor=(4, 4))

    (placed,) = of_type(events, e.DominoPlaced)
    assert (placed.clouds_taken, placed.clouds_returned) == (1, 0)
    assert state.seats[MARY].clouds == 3
    assert state.clouds[at(state, 4, 5)] == 0
    assert state.box_clouds == box
    assert clouds_in_game(state) == 32


def test_a_meadow_cloud_beyond_the_six_cloud_spaces_goes_back_to_the_box() -> None:
    state = valley()
    assert state.seats[MARY].clouds == 6
    box = state.box_clouds

    events, state = cover(state, MARY, (4, 5), (4, 6), anchor=(4, 4))

    (placed,) = of_type(events, e.DominoPlaced)
    assert (placed.clouds_taken, placed.clouds_returned) == (0, 1)
    assert state.seats[MARY].clouds == 6
    assert state.clouds[at(state, 4, 5)] == 0
    assert state.box_clouds == box + 1
    assert clouds_in_game(state) == 32


def test_on_the_front_the_clouds_lie_on_the_meadow_not_on_area_spaces() -> None:
    state = holding_clouds(valley(), MARY, 0)
    state = ready_to_plant(state, MARY, (2, 2), (3, 2))

    events, state = run(state, plant(MARY, (2, 1), "orange turf"))

    assert of_type(events, e.PlantPlaced)[0].clouds_taken == 0
    assert state.seats[MARY].clouds == 0


def test_on_the_back_a_plant_on_a_cloud_area_space_takes_the_cloud() -> None:
    state = holding_clouds(valley(board="valley-back"), MARY, 3)
    assert state.board.kinds[at(state, 2, 1)] == AREA
    assert state.clouds[at(state, 2, 1)] == 1
    state = ready_to_plant(state, MARY, (2, 2), (3, 2))

    events, state = run(state, plant(MARY, (2, 1), "orange turf"))

    (placed,) = of_type(events, e.PlantPlaced)
    assert (placed.clouds_taken, placed.clouds_returned) == (1, 0)
    assert state.seats[MARY].clouds == 4
    assert state.clouds[at(state, 2, 1)] == 0
    assert clouds_in_game(state) == 32


def test_on_the_back_the_meadow_holds_no_clouds() -> None:
    state = holding_clouds(valley(board="valley-back"), MARY, 2)
    assert not any(state.clouds[cell] for cell in state.board.cells if state.area_of[cell] < 0)

    # (4, 5) is a meadow cloud space on the front; on the back it is plain meadow.
    events, state = cover(state, MARY, (4, 5), (4, 6), anchor=(4, 4))

    placed = of_type(events, e.DominoPlaced)[0]
    assert (placed.clouds_taken, placed.clouds_returned) == (0, 0)
    assert state.seats[MARY].clouds == 2


# --- scoring ---------------------------------------------------------------------------------


def test_no_area_is_scored_during_play_even_when_closed() -> None:
    # Area e, (11, 12) (12, 12) (11, 13), touches the meadow only on (11, 11) and (12, 11).
    state = valley()
    assert state.area_tokens == (None,) * len(state.board.area_ids)

    events, state = cover(state, MARY, (11, 11), (12, 11), anchor=(10, 11))
    events += run(state, plant(MARY, (11, 12), "orange oak"))[0]

    assert is_closed(state, area_index(state, "e"))
    assert not of_type(events, e.AreaScored)
    assert of_type(events, e.PlantPlaced)[0].points == 1


def final_area_scores(plants: dict[XY, str], *mushrooms: XY) -> dict[str, e.AreaScored]:
    state = with_plants(joined_earlier(valley(), *mushrooms), plants)
    events, _ = finish(state)
    return {scored.area: scored for scored in of_type(events, e.AreaScored)}


def test_final_scoring_gives_the_area_size_to_the_first_and_half_rounded_down_to_the_second() -> (
    None
):
    # B has 5 spaces: the highest total scores 5, the second 5 // 2 = 2.
    scored = final_area_scores({(5, 0): "orange oak", (6, 0): "blue bush"})["B"]

    assert scored.final
    assert (scored.size, scored.main, scored.minor) == (5, 5, 2)
    assert scored.totals == {"orange": 4, "blue": 2}
    assert awards(scored) == [(MARY, 5), (PAUL, 2)]


def test_a_player_alone_in_an_area_scores_for_the_highest_and_the_second_highest_total() -> None:
    scored = final_area_scores({(1, 0): "orange turf", (2, 0): "orange bush"})["A"]  # 6 spaces

    assert awards(scored) == [(MARY, 6 + 3)]


def test_colours_with_equal_totals_are_ignored() -> None:
    scores = final_area_scores(
        {
            (0, 3): "orange pine",  # H, 6 spaces: orange 3, blue 3
            (1, 3): "blue pine",
            (5, 4): "orange bush",  # I, 6 spaces: orange 2, blue 2, black 1
            (6, 4): "blue bush",
            (7, 4): "black turf",
        }
    )

    assert scores["H"].cancelled == ["orange", "blue"]
    assert awards(scores["H"]) == []
    # Ruling 7: the only colour left after the tie scores as if alone.
    assert scores["I"].cancelled == ["orange", "blue"]
    assert awards(scores["I"]) == [(FRANK, 6 + 3)]


def test_the_neutral_colour_scores_nothing_but_takes_its_rank() -> None:
    # Q (6 spaces): neutral 4 is highest, orange 2 second: orange gets 6 // 2 = 3 only.
    scored = final_area_scores({(5, 6): "neutral oak", (6, 6): "orange bush"})["Q"]

    assert scored.totals == {"neutral": 4, "orange": 2}
    assert awards(scored) == [(MARY, 3)]


def test_a_joined_area_is_scored_once_by_its_joined_size() -> None:
    scores = final_area_scores({(21, 4): "blue turf"}, (21, 5))  # N + T + mushroom: 8 spaces

    assert scores["N"].size == 8
    assert awards(scores["N"]) == [(PAUL, 8 + 4)]
    assert "T" not in scores
    assert len(scores) == 33 - 1


def tied_game(plants: dict[XY, str], scores: tuple[int, int], *mushrooms: XY) -> e.GameEnded:
    """A 2-player final scoring (black seat 0, white seat 1) without clouds or plants left on
    the player boards, from the given scores before the final scoring."""
    state = joined_earlier(valley(players=2), *mushrooms)
    state = with_plants(state, plants)
    for seat, score in enumerate(scores):
        state = with_seat(state, seat, score=score, clouds=0, plants=(0,) * 8)
    events, _ = finish(state)
    (ended,) = of_type(events, e.GameEnded)
    return ended


def test_a_tie_goes_to_the_player_with_the_majority_in_the_largest_area() -> None:
    assert [COLOURS[s.colour] for s in valley(players=2).seats] == ["black", "white"]
    # N + T (8 spaces) is the largest area: black 4 scores 8, white 3 scores 4.
    ended = tied_game({(21, 3): "black oak", (21, 6): "white pine"}, (20, 24), (21, 5))

    assert ended.scores == [28, 28]
    assert (ended.tiebreak[0][0], ended.tiebreak[1][0]) == (1, 0)  # majorities in 8-space areas
    assert ended.winners == [0]
    assert ended.ranking == [0, 1]


def test_a_tie_in_the_largest_area_is_broken_in_the_next_largest() -> None:
    # J + R (11) is the largest area, N + T (8) the next: equal totals in J, white ahead in N.
    plants = {
        (10, 3): "black pine",
        (10, 6): "white pine",
        (21, 3): "black turf",
        (21, 6): "white bush",
    }
    ended = tied_game(plants, (24, 20), (11, 5), (21, 5))

    assert ended.scores == [24 + 4, 20 + 8]
    assert ended.tiebreak[0][:2] == [0, 0]  # nobody holds J + R: the tied totals cancel
    assert ended.tiebreak[1][:2] == [0, 1]
    assert ended.winners == [1]
    assert ended.ranking == [1, 0]


def test_the_majority_in_the_largest_area_is_held_by_the_colour_left_after_a_tie() -> None:
    # J + R (11 spaces): black 3 and neutral 3 cancel (ruling 7), so white's 2 is the majority
    # and scores 11 + 5 alone; black's higher total holds nothing.
    plants = {(10, 3): "black pine", (10, 6): "neutral pine", (11, 3): "white bush"}
    ended = tied_game(plants, (16, 0), (11, 5))

    assert ended.scores == [16, 16]
    assert (ended.tiebreak[0][0], ended.tiebreak[1][0]) == (0, 1)
    assert ended.winners == [1]


def test_areas_of_the_same_size_count_alike_in_the_tie_break() -> None:
    # Without mushrooms the largest areas are A, H, I, Q, S and V (6 spaces each): white holds
    # two of them, black one; which comes first on the board does not matter.
    plants = {(1, 0): "black turf", (0, 3): "white turf", (7, 3): "white turf"}
    ended = tied_game(plants, (20, 11))

    assert ended.scores == [29, 29]
    assert (ended.tiebreak[0][0], ended.tiebreak[1][0]) == (1, 2)
    assert ended.winners == [1]


def test_players_tied_in_points_and_in_every_area_share_the_victory() -> None:
    ended = tied_game({}, (10, 10))

    assert ended.scores == [10, 10]
    assert ended.winners == [0, 1]


# --- whole games with bots -------------------------------------------------------------------

GAMES = [
    (board, players, bot)
    for board in ("valley", "valley-back")
    for players in (2, 3, 4)
    for bot in ("random", "greedy")
]


def dominoes_in_game(state: GameState) -> int:
    held = sum(len(seat.hand) + len(seat.reserve) for seat in state.seats)
    return held + len(state.dominoes) + len(state.box_dominoes)


@pytest.mark.parametrize(("board", "players", "bot"), GAMES)
def test_a_bot_game_on_a_valley_board_ends_and_keeps_every_invariant(
    board: str, players: int, bot: str
) -> None:
    seed = f"valley {board} {players} {bot}"
    log, final = play(players, seed, [bot] * players, board=board)

    assert final.phase == "finished"
    assert replay(log) == final

    scores = [0] * players
    for event in log:
        for seat, points, _ in e.points_awarded(event):
            scores[seat] += points
    assert scores == [seat.score for seat in final.seats]
    (ended,) = of_type(log, e.GameEnded)
    assert ended.scores == scores
    assert not of_type(log, e.TokensRevealed)
    # Front: clouds come from covering meadow spaces; back: from planting on area spaces.
    from_meadow = [p for p in of_type(log, e.DominoPlaced) if p.clouds_taken + p.clouds_returned]
    from_areas = [p for p in of_type(log, e.PlantPlaced) if p.clouds_taken + p.clouds_returned]
    assert not (from_areas if board == "valley" else from_meadow)
    assert all(scored.final for scored in of_type(log, e.AreaScored))

    gained = len(of_type(log, e.MushroomGained)) - len(of_type(log, e.MushroomDeclined))
    joined = len(of_type(log, e.MushroomPlaced))
    assert gained == joined + len(of_type(log, e.MushroomLost)) == 8 - final.mushrooms_left
    assert joined > 0
    assert sum(final.area_sizes) == sum(final.board.area_sizes) + joined
    assert sum(1 for a in final.area_of if a >= 0) == sum(final.area_sizes)

    state = None
    plants = dominoes = 0
    for step, event in enumerate(log):
        state = evolve(state, event)
        if step == 0:
            plants, dominoes = plants_in_game(state), dominoes_in_game(state)
        assert plants_in_game(state) == plants
        assert dominoes_in_game(state) == dominoes == len(components().dominoes)
        assert clouds_in_game(state) == state.board.cloud_tokens == 32
        if state.current >= 0:
            for action in legal_actions(state, state.current):
                decide(state, action)  # raises if decide rejects a legal action
