"""A seat's own-perspective state (``renature.perspective``): what the seat knows, no more.

The property that makes it useful: a seat deciding on its perspective has exactly the choices
it has on the real state, in every state reached by bot games on every board.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from renature import events as e
from renature.board import available_boards
from renature.game import play
from renature.perspective import HIDDEN, decode_state, encode_state, perspective
from renature.rules import evolve, legal_actions
from renature.state import GameState

GAMES = [(2, "greedy"), (2, "random"), (3, "random"), (4, "greedy"), (4, "random")]


def states_of(events: list[e.Event]) -> Iterator[GameState]:
    """Every state a game passes through, one per event."""
    state: GameState | None = None
    for event in events:
        state = evolve(state, event)
        yield state


@pytest.fixture(scope="module", params=available_boards())
def reached(request: pytest.FixtureRequest) -> list[GameState]:
    """The states of five bot games of 2, 3 and 4 players on one board."""
    board = request.param
    states: list[GameState] = []
    for players, bot in GAMES:
        events, _ = play(players, f"perspective-{board}-{players}", [bot] * players, board)
        states += states_of(events)
    return states


def test_there_are_three_boards() -> None:
    assert len(available_boards()) == 3


def test_every_seat_has_the_same_legal_actions_in_its_perspective(
    reached: list[GameState],
) -> None:
    for state in reached:
        for seat in range(state.players):
            assert legal_actions(perspective(state, seat), seat) == legal_actions(state, seat), (
                f"seat {seat} at version {state.version} of {state.game_id}"
            )


def test_a_perspective_hides_other_hands_every_reserve_and_the_box_but_keeps_counts(
    reached: list[GameState],
) -> None:
    for state in reached[:: max(1, len(reached) // 60)]:
        for seat in range(state.players):
            seen = perspective(state, seat)
            assert seen.seats[seat].hand == state.seats[seat].hand
            assert seen.last_hash == ""
            assert set(seen.box_dominoes) <= {HIDDEN}
            assert len(seen.box_dominoes) == len(state.box_dominoes)
            for other, (mine, real) in enumerate(zip(seen.seats, state.seats, strict=True)):
                assert set(mine.reserve) <= {HIDDEN}
                assert len(mine.reserve) == len(real.reserve)
                assert len(mine.hand) == len(real.hand)
                if other != seat:
                    assert set(mine.hand) <= {HIDDEN}


def test_a_collected_token_of_another_seat_keeps_its_front_until_the_end(
    reached: list[GameState],
) -> None:
    for state in reached:
        board = state.board
        for seat in range(state.players):
            seen = perspective(state, seat)
            for other, (mine, real) in enumerate(zip(seen.seats, state.seats, strict=True)):
                if other == seat or state.is_over:
                    assert mine.tokens == real.tokens
                    continue
                fronts = [(board.token(t).main, board.token(t).minor) for t in mine.tokens]
                assert fronts == [(board.token(t).main, board.token(t).minor) for t in real.tokens]


def test_a_perspective_goes_over_the_wire_and_back_unchanged(reached: list[GameState]) -> None:
    for state in reached[:: max(1, len(reached) // 20)]:
        seen = perspective(state, 0)
        assert decode_state(encode_state(seen)) == seen
