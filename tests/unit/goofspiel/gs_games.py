"""Games of Goofspiel set up for a test: a started game, bids by card."""

from __future__ import annotations

from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.game import setup_commands
from goofspiel.rules import execute
from goofspiel.state import GameState

SEED = "rules-test"


def started(
    cards: int = 13, ties: str = "discard", seed: str = SEED
) -> tuple[list[e.Event], GameState]:
    log: list[e.Event] = []
    state: GameState | None = None
    options = c.Options(cards=cards, ties=ties)  # type: ignore[arg-type]  # a test's own ties
    for command in setup_commands("g1", seed, ["Ada", "Bo"], options):
        events, state = execute(state, command)
        log += events
    assert state is not None
    return log, state


def bids(state: GameState, *pairs: tuple[int, int]) -> tuple[list[e.Event], GameState]:
    """Both seats bid, pair by pair (seat 0's card, seat 1's card)."""
    log: list[e.Event] = []
    for first, second in pairs:
        for seat, card in ((0, first), (1, second)):
            events, state = execute(state, c.Bid(seat=seat, card=card))
            log += events
    return log, state
