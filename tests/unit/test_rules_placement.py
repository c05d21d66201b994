"""Step A: placing a domino on the brook (English online rules, "A:"; rulings page, ruling 1).

Sketches are windows of the base board (see ``helpers``): ``.`` free brook, ``@`` starting space,
capital letters area spaces, ``#`` off the board, lowercase letters animals (o owl, s salamander,
f frog, b butterfly, ...).
"""

from __future__ import annotations

import pytest
from helpers import (
    XY,
    domino,
    new_game,
    of_type,
    place,
    run,
    sketch,
    with_clouds,
    with_hand,
    with_joker,
    with_sketch,
)

from renature import commands as c
from renature import events as e
from renature.errors import IllegalPlacement, NotInHand
from renature.placement import legal_placements
from renature.rules import legal_actions
from renature.state import GameState


def mary_holds(*dominoes: tuple[str, str]) -> GameState:
    """A new 3-player game; Mary (seat 0, orange) is to play and holds these dominoes."""
    return with_hand(new_game(), 0, *(domino(a, b) for a, b in dominoes))


# --- where a domino may lie --------------------------------------------------------------------


def test_the_first_domino_may_lie_on_a_starting_space() -> None:
    state = mary_holds(("owl", "salamander"))

    events, after = run(state, place(0, "owl", (4, 2), "salamander", (4, 1)))

    assert of_type(events, e.DominoPlaced)
    assert sketch(after, (3, 0), (5, 3)) == "A.#\nAsB\nAoB\nA.B"


def test_a_domino_neither_on_a_starting_space_nor_beside_an_animal_is_rejected() -> None:
    state = mary_holds(("owl", "salamander"))

    with pytest.raises(IllegalPlacement, match="starting space or beside"):
        run(state, place(0, "owl", (8, 4), "salamander", (9, 4)))


def test_a_domino_beside_a_matching_animal_may_be_placed() -> None:
    state = with_sketch(mary_holds(("owl", "salamander")), "..o.", at=(8, 4))

    _, after = run(state, place(0, "owl", (9, 4), "salamander", (8, 4)))

    assert sketch(after, (8, 4), (11, 4)) == "soo."


def test_a_domino_beside_a_different_animal_is_rejected() -> None:
    state = with_sketch(mary_holds(("frog", "salamander")), "..o.", at=(8, 4))

    with pytest.raises(IllegalPlacement, match="must match"):
        run(state, place(0, "frog", (9, 4), "salamander", (8, 4)))


def test_every_animal_beside_a_half_must_match_not_just_one() -> None:
    # The owl half on (8, 4) would match the owl on its right but not the frog on its left.
    state = with_sketch(
        mary_holds(("owl", "salamander")),
        """
        B.C
        f.o
        #.I
        """,
        at=(7, 3),
    )

    with pytest.raises(IllegalPlacement, match="frog"):
        run(state, place(0, "owl", (8, 4), "salamander", (8, 5)))


def test_the_second_half_must_match_its_neighbours_too() -> None:
    # The owl half matches; the salamander half would lie beside a frog.
    state = with_sketch(mary_holds(("owl", "salamander")), "f..o", at=(7, 4))

    with pytest.raises(IllegalPlacement, match="salamander"):
        run(state, place(0, "owl", (9, 4), "salamander", (8, 4)))


def test_the_two_halves_of_a_domino_are_not_checked_against_each_other() -> None:
    state = with_sketch(mary_holds(("owl", "frog")), "..o", at=(8, 4))

    _, after = run(state, place(0, "owl", (9, 4), "frog", (8, 4)))

    assert sketch(after, (8, 4), (10, 4)) == "foo"


def test_both_halves_must_lie_on_brook_spaces_not_in_an_area() -> None:
    state = mary_holds(("owl", "salamander"))

    with pytest.raises(IllegalPlacement, match="brook"):
        run(state, place(0, "owl", (4, 2), "salamander", (3, 2)))  # (3, 2) is in area A


def test_a_half_may_not_lie_on_a_covered_brook_space() -> None:
    state = with_sketch(mary_holds(("owl", "salamander")), ".\no\n@", at=(4, 0))

    with pytest.raises(IllegalPlacement, match="already covered"):
        run(state, place(0, "owl", (4, 2), "salamander", (4, 1)))


def test_the_two_halves_must_lie_side_by_side() -> None:
    state = mary_holds(("owl", "salamander"))

    with pytest.raises(IllegalPlacement, match="side by side"):
        run(state, place(0, "owl", (4, 2), "salamander", (4, 0)))
    with pytest.raises(IllegalPlacement, match="side by side"):  # diagonal is not beside
        run(state, place(0, "owl", (4, 3), "salamander", (5, 4)))


@pytest.mark.parametrize(
    ("first", "second"),
    [((-1, 4), (0, 4)), ((25, 4), (26, 4)), ((8, 12), (8, 13))],
    ids=["left of the grid", "right of the grid", "below the grid"],
)
def test_a_domino_may_not_reach_beyond_the_grid(first: XY, second: XY) -> None:
    state = mary_holds(("owl", "salamander"))
    command = c.PlaceDomino(0, domino("owl", "salamander"), c.Cell(*first), c.Cell(*second))

    with pytest.raises(IllegalPlacement, match="not on the board"):
        run(state, command)


def test_a_domino_may_not_lie_on_a_space_off_the_board_inside_the_grid() -> None:
    state = with_sketch(mary_holds(("owl", "salamander")), "o.#", at=(4, 6))

    with pytest.raises(IllegalPlacement, match="not a brook space"):
        run(state, place(0, "owl", (5, 6), "salamander", (6, 6)))


def test_a_domino_must_come_from_the_hand() -> None:
    state = mary_holds(("owl", "salamander"))

    with pytest.raises(NotInHand):
        run(state, place(0, "owl", (4, 2), "frog", (4, 1)))


# --- the joker (ruling 1) -----------------------------------------------------------------------


def test_any_animal_may_lie_beside_the_joker() -> None:
    # The butterfly is the starting joker.
    state = with_sketch(mary_holds(("frog", "salamander")), "..b", at=(8, 4))

    _, after = run(state, place(0, "frog", (9, 4), "salamander", (8, 4)))

    assert sketch(after, (8, 4), (10, 4)) == "sfb"


def test_the_joker_may_lie_beside_any_animal() -> None:
    # The butterfly half goes between a frog and an owl.
    state = with_sketch(
        mary_holds(("butterfly", "salamander")),
        """
        B.C
        f.o
        #.I
        """,
        at=(7, 3),
    )

    _, after = run(state, place(0, "butterfly", (8, 4), "salamander", (8, 5)))

    assert sketch(after, (7, 3), (9, 5)) == "B.C\nfbo\n#sI"


def test_after_the_joker_changes_only_the_new_joker_is_wild() -> None:
    # The joker is now the salamander: the butterfly is an ordinary animal.
    position = """
        B.C
        f.o
        #.I
        """
    state = with_joker(mary_holds(("butterfly", "deer"), ("salamander", "deer")), "salamander")
    state = with_sketch(state, position, at=(7, 3))

    with pytest.raises(IllegalPlacement, match="must match"):
        run(state, place(0, "butterfly", (8, 4), "deer", (8, 5)))
    _, after = run(state, place(0, "salamander", (8, 4), "deer", (8, 5)))
    assert sketch(after, (7, 3), (9, 5)) == "B.C\nfso\n#dI"


def test_matching_is_judged_with_the_joker_of_the_moment_and_a_later_change_keeps_the_board() -> (
    None
):
    # Mary lays her butterfly (the joker) beside an owl, then pays 2 clouds to make the
    # salamander the joker. The butterfly stays beside the owl; from now on it is an ordinary
    # animal, and only butterflies or the new joker may join it.
    state = with_sketch(mary_holds(("butterfly", "frog")), ".o", at=(8, 4))
    state = with_hand(state, 1, domino("deer", "frog"), domino("salamander", "deer"))

    events, state = run(
        state,
        place(0, "butterfly", (8, 4), "frog", (8, 5)),
        c.CloudAction(0, "change_joker", animal="salamander"),
        c.SkipPlant(0),
        c.EndTurn(0),
    )

    assert of_type(events, e.DominoPlaced)[0].joker == "butterfly"
    assert of_type(events, e.JokerChanged)[0].cost == 2
    assert state.seats[0].clouds == 4
    assert sketch(state, (6, 3), (9, 5)) == "BB.C\n..bo\n##fI"
    assert state.current == 1
    # Frank: a deer beside the butterfly no longer matches; the new joker does.
    with pytest.raises(IllegalPlacement, match="butterfly"):
        run(state, place(1, "deer", (7, 4), "frog", (6, 4)))
    _, after = run(state, place(1, "salamander", (7, 4), "deer", (6, 4)))
    assert sketch(after, (6, 3), (9, 5)) == "BB.C\ndsbo\n##fI"


# --- legal placements ---------------------------------------------------------------------------


def test_on_an_empty_board_a_domino_fits_in_16_ways() -> None:
    # 4 starting spaces, each with 2 brook neighbours, each pair in both orientations.
    state = new_game()

    assert len(legal_placements(state, (domino("owl", "frog"),))) == 16
    assert len(legal_placements(state, (domino("owl", "owl"),))) == 16


def test_the_starting_player_has_48_placements_3_discards_and_9_joker_changes() -> None:
    state = new_game()
    seat = state.seats[0]
    assert len(set(seat.hand)) == 3

    actions = legal_actions(state, 0)

    assert sum(isinstance(a, c.PlaceDomino) for a in actions) == 48
    assert sum(isinstance(a, c.DiscardDomino) for a in actions) == 3
    assert sum(isinstance(a, c.CloudAction) for a in actions) == 9
    assert len(actions) == 60
    assert legal_actions(state, 1) == []


def test_without_clouds_there_are_no_joker_changes_among_the_legal_actions() -> None:
    state = with_clouds(new_game(), 0, 0)

    assert not any(isinstance(a, c.CloudAction) for a in legal_actions(state, 0))
