"""Seats coming and going: leaving or being freed in the lobby, cancelling an unstarted game,
running out of time and taking a seat back from the bot (docs/rules-goofspiel.md, rulings 9 to
12).

These commands are decided like every other (``goofspiel.rules`` dispatches to `DECIDERS`,
``evolve`` to `EVOLVERS`). The clock is the platform's (`gameplatform.clock`), folded from the
times recorded with each batch: the core reads no clock, and a timeout claim is decided against
the time it is decided at, so a replay or an audit re-decides it to the same events.

Whose time runs: bids are taken in seat order (ruling 2), so the game waits for one seat at a
time, and that seat's time runs from the moment the game began waiting for it (its prize turned
up, or for seat 1 the moment seat 0's bid was sealed). A seat that timed out in a game whose
clock says ``bot`` is bid for by the rules from then on (`play_on`: the lowest card of its
hand), inside the batch of the command that made the game wait for it, so its bids are part
of the recorded, re-decidable outcome of that command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from gameplatform import clock as clk
from gameplatform.execution import Batch
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.errors import GameOver, InvalidCommand, NotPlayedByBot, WrongPhase
from goofspiel.state import GameState, SeatStatus

SEATS = (0, 1)
GoofBatch = Batch[GameState, e.Event]


# --- the clock ---------------------------------------------------------------------------------


def owner(state: GameState) -> int:
    """The seat whose time runs (-1: none): the seat the game waits for, while it bids for
    itself. Between the reveal of a turn's bids and the next prize nobody's time runs."""
    seat = state.to_move
    waiting = seat is not None and len(state.shown[seat]) < state.turn
    return seat if seat is not None and waiting and state.statuses[seat] == "playing" else -1


def started(control: clk.TimeControl | Any) -> clk.ClockState | None:
    """The clock of a new game (None: the game has no time control)."""
    return clk.start(control, len(SEATS)) if isinstance(control, clk.TimeControl) else None


def after_event(state: GameState, event: e.Event) -> GameState:
    """The clock after ``event`` (``evolve`` calls it for a game with a clock)."""
    if state.clock is None:
        return state
    now = event.cause.time if event.cause is not None else None
    ticked = clk.tick(state.clock, now, owner(state), state.turn)
    return state if ticked is state.clock else replace(state, clock=ticked)


def deadline_passed(state: GameState, seat: int, now: str | None) -> str:
    """The deadline ``seat`` missed, or the rule error that refuses the claim (the platform's)."""
    return clk.deadline_passed(state.clock, seat, now)


# --- deciding ----------------------------------------------------------------------------------


def _lobby_seat(state: GameState, seat: int) -> None:
    if state.phase == "cancelled":
        raise GameOver("The game was cancelled.")
    if state.phase != "lobby":
        raise WrongPhase("The game has started: a player can only resign now.")
    if seat not in SEATS:
        raise InvalidCommand("Goofspiel has seats 0 and 1.")
    if state.names[seat] is None:
        raise InvalidCommand(f"Seat {seat} has no player.")


def _leave(batch: GoofBatch, command: c.LeaveGame) -> None:
    _lobby_seat(batch.state, command.seat)
    batch.emit(e.PlayerLeft, seat=command.seat, reason="left")


def _remove(batch: GoofBatch, command: c.RemovePlayer) -> None:
    _lobby_seat(batch.state, command.seat)
    batch.emit(e.PlayerLeft, seat=command.seat, reason="removed")


def _cancel(batch: GoofBatch, command: c.CancelGame) -> None:
    if batch.state.phase == "cancelled":
        raise GameOver("The game was cancelled already.")
    if batch.state.phase != "lobby":
        raise WrongPhase("Only a game that has not started can be cancelled.")
    batch.emit(e.GameCancelled)


def _in_play(state: GameState, seat: int) -> None:
    if state.phase == "cancelled":
        raise GameOver("The game was cancelled.")
    if state.phase == "lobby":
        raise WrongPhase("The game has not started: no clock runs and no bot plays.")
    if state.phase != "bidding":
        raise GameOver("The game is over: no prize is left to bid for.")
    if seat not in SEATS:
        raise InvalidCommand("Goofspiel has seats 0 and 1.")


def _claim_timeout(batch: GoofBatch, command: c.ClaimTimeout) -> None:
    state = batch.state
    _in_play(state, command.seat)
    now = batch.cause.time if batch.cause is not None else None
    deadline = deadline_passed(state, command.seat, now)
    assert state.clock is not None
    batch.emit(
        e.SeatTimedOut,
        seat=command.seat,
        deadline=deadline,
        on_timeout=state.clock.control.on_timeout,
    )


def _reclaim(batch: GoofBatch, command: c.ReclaimSeat) -> None:
    state = batch.state
    _in_play(state, command.seat)
    if state.statuses[command.seat] != "bot":
        raise NotPlayedByBot(f"No bot plays seat {command.seat}: it is its player's already.")
    batch.emit(e.SeatReclaimed, seat=command.seat)


DECIDERS: dict[type, Callable[[GoofBatch, Any], None]] = {
    c.LeaveGame: _leave,
    c.RemovePlayer: _remove,
    c.CancelGame: _cancel,
    c.ClaimTimeout: _claim_timeout,
    c.ReclaimSeat: _reclaim,
}


def play_on(batch: GoofBatch, bid: Callable[[GoofBatch, c.Bid], None]) -> None:
    """While the game waits for a seat a bot plays, bid the lowest card of its hand for it
    (``bid`` is the rules' own decider of a ``Bid``)."""
    while True:
        state = batch.state
        seat = state.to_move
        if seat is None or state.statuses[seat] != "bot":
            return
        bid(batch, c.Bid(seat=seat, card=min(state.hands[seat])))


# --- evolving ----------------------------------------------------------------------------------


def with_status(state: GameState, seat: int, status: SeatStatus) -> tuple[SeatStatus, ...]:
    return tuple(status if s == seat else old for s, old in enumerate(state.statuses))


def _left(state: GameState, event: e.PlayerLeft) -> GameState:
    assert event.seat is not None
    names = tuple(None if s == event.seat else name for s, name in enumerate(state.names))
    return replace(state, names=names)


def _cancelled(state: GameState, event: e.GameCancelled) -> GameState:
    return replace(state, phase="cancelled")


def _timed_out(state: GameState, event: e.SeatTimedOut) -> GameState:
    assert event.seat is not None
    if event.on_timeout == "bot":
        return replace(state, statuses=with_status(state, event.seat, "bot"))
    return replace(
        state,
        phase="final_scoring",
        resigned=event.seat,
        statuses=with_status(state, event.seat, "removed"),
    )


def _reclaimed(state: GameState, event: e.SeatReclaimed) -> GameState:
    assert event.seat is not None
    return replace(state, statuses=with_status(state, event.seat, "playing"))


EVOLVERS: dict[type, Callable[[GameState, Any], GameState]] = {
    e.PlayerLeft: _left,
    e.GameCancelled: _cancelled,
    e.SeatTimedOut: _timed_out,
    e.SeatReclaimed: _reclaimed,
}
