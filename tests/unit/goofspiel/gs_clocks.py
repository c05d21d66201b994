"""Games of Goofspiel with a turn clock, each command decided at a recorded time (seconds after
`T0`), as the services decide them."""

from __future__ import annotations

from typing import Any

from gameplatform.clock import TimeControl, epoch_ms, iso
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.game import setup_commands
from goofspiel.rules import execute
from goofspiel.state import GameState

T0 = "2026-11-25T12:00:00.000Z"
SEED = "clock-test"


def at(seconds: float) -> str:
    """The time ``seconds`` after `T0`."""
    return iso(epoch_ms(T0) + round(seconds * 1000))


def clocked(
    on_timeout: str = "bot", cards: int = 13, seed: str = SEED, **control: Any
) -> tuple[list[e.Event], GameState]:
    """A started game with a time control (``per_turn`` 30 s unless told), set up at `T0`."""
    clock = TimeControl(on_timeout=on_timeout, **(control or {"per_turn": 30}))  # type: ignore[arg-type]  # a test's own values
    options = c.Options(cards=cards, time_control=clock)
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands("g1", seed, ["Ada", "Bo"], options):
        events, state = execute(state, command, time=T0)
        log += events
    assert state is not None
    return log, state


def run(
    log: list[e.Event], state: GameState, command: c.Command, seconds: float
) -> tuple[list[e.Event], GameState]:
    """``command`` decided ``seconds`` after `T0`, its events added to ``log``."""
    events, state = execute(state, command, time=at(seconds))
    log += events
    return events, state
