"""Games of the variants for the tests: created, seated and started through the real rules."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance.game import setup_commands
from renaissance.rules import execute
from renaissance.state import GameState

SILVER_SEAT, GOLD_SEAT = 0, 1
SALTS = ("a1" * 16, "b2" * 16)
"""A salt a seat (the service, in play) seals its hand with."""

PHASE1 = c.Variant(play="phase1", extra_hands=["rectangle", "ring"])
TAKE = c.Variant(play="phase2", distribution="take")
GIVE = c.Variant(play="phase2", distribution="give")
AGREEMENT = c.Variant(phase2_agreement=True)


def started(variant: c.Variant, sets: int = 1) -> GameState:
    state: GameState | None = None
    for command in setup_commands("v", "seed", ["silver", "gold"], sets, "points", variant):
        state = execute(state, command)[1]
    assert state is not None
    return state


def show(state: GameState, seat: int, hand: c.JankenHand) -> tuple[list[e.Event], GameState]:
    return execute(state, c.ShowHand(seat, hand, SALTS[seat]))


def janken(state: GameState, gold: c.JankenHand, silver: c.JankenHand) -> GameState:
    """Both seats show their hands, Gold first."""
    state = show(state, GOLD_SEAT, gold)[1]
    return show(state, SILVER_SEAT, silver)[1]
