"""Whole Renaissance games play to their end with every kind of bot."""

from __future__ import annotations

import pytest

from renaissance.game import play, replay


@pytest.mark.parametrize("bots", [("random", "random"), ("greedy", "greedy"), ("random", "greedy")])
def test_a_bot_game_plays_to_its_end_and_its_replay_is_the_live_state(
    bots: tuple[str, str],
) -> None:
    log, state = play("smoke", bots)
    assert state.is_over
    assert replay(log) == state
    assert state.winners
