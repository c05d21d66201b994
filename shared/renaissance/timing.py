"""Renaissance's turn clock (ruling 18): the platform's clocks (`gameplatform.clock`), folded
from the recorded times of the batches like any game's; a seat whose time runs out loses."""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from gameplatform import clock as clk
from renaissance import events as e
from renaissance.errors import InvalidCommand
from renaissance.state import GameState

IDLE_PHASES = ("lobby", "finished", "cancelled")
"""Phases in which no seat's time runs."""


def checked_control(
    control: clk.TimeControl | msgspec.UnsetType,
) -> clk.TimeControl | msgspec.UnsetType:
    """A creation's time control, refused when it cannot be used: a timeout loses a
    Renaissance game (no bot plays on), so ``on_timeout`` is ``remove``."""
    if not isinstance(control, clk.TimeControl):
        return control
    problem = control.problem()
    if problem is None and control.on_timeout != "remove":
        problem = "A Renaissance seat whose time runs out loses: on_timeout is remove."
    if problem is not None:
        raise InvalidCommand(problem)
    return control


def started(control: clk.TimeControl | msgspec.UnsetType) -> clk.ClockState | None:
    return clk.start(control, 2) if isinstance(control, clk.TimeControl) else None


def after_event(state: GameState, event: e.Event) -> GameState:
    """The clock after ``event``: the seat to move's time runs, a new turn for each turn or
    set begun."""
    assert state.clock is not None
    turns = state.turns + isinstance(event, e.TurnEnded | e.SetStarted)
    owner = state.current if state.phase not in IDLE_PHASES and state.current >= 0 else -1
    now = event.cause.time if event.cause is not None else None
    ticked = clk.tick(state.clock, now, owner, turns)
    return replace(state, clock=ticked, turns=turns)


def deadline_passed(state: GameState, seat: int, now: str | None) -> str:
    """The deadline ``seat`` missed, or the rule error that refuses the claim (the platform's)."""
    return clk.deadline_passed(state.clock, seat, now)
