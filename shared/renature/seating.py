"""Seats coming and going: leaving or being removed from the lobby, cancelling an unstarted
game, resigning a started one, and running out of time (docs/rules.md, "Leaving, resigning,
clocks").

These commands are decided like every other (``renature.rules.execute`` dispatches to
`DECIDERS`, ``evolve`` to `EVOLVERS`). A timeout is decided from the recorded times alone
(``renature.clock``): the clock service asks, the rules check the deadline against the time the
command is decided at, so a replay or an audit re-decides it to the same events.

A seat that timed out in a game with ``on_timeout="bot"`` is played on by a bot: whenever the
turn is such a seat's, `play_on` plays the first legal action until the turn passes (placing
a domino where it can, the first plant spot, never a cloud action), inside the batch of the
command that gave it the turn, so the bot's moves are part of the recorded, re-decidable
outcome of that command. The seat's player takes it back with ``ReclaimSeat`` (accepted
only while a bot plays the seat): it plays for itself again from its next turn on.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from renature import clock as clk
from renature import commands as c
from renature import events as e
from renature.components import COLOURS
from renature.errors import GameOver, InvalidCommand, RuleError, WrongPhase
from renature.legal_moves import legal_actions
from renature.state import GameState, SeatState
from renature.turns import Batch, end_turn

SeatStatus = Literal["playing", "bot", "resigned", "removed"]
"""``bot``: timed out, a bot plays on for it; ``resigned``: resigned; ``removed``: timed out
in a game whose time control removes such seats. Resigned and removed seats are out of the
game (docs/rules.md)."""

PLAY_PHASES = frozenset({"place_domino", "place_plant", "place_mushroom", "end_of_turn"})
OUT_OF_GAME = frozenset({"resigned", "removed"})


class ClockRunning(RuleError):
    """A timeout claimed before the deadline (or for a seat whose time is not running)."""

    code = "clock_running"


class NotABotSeat(RuleError):
    """A seat taken back that no bot plays (it plays for itself, or is out of the game)."""

    code = "not_a_bot_seat"


class ClockView(msgspec.Struct, frozen=True):
    """A game's clock as every viewer sees it. ``running_for``: the seat whose time runs
    (None when none does); ``turn_started`` and ``deadline``: UTC times of the running turn;
    ``remaining_ms``: each seat's bank as of the start of the running turn (total mode, empty
    for a time per turn); ``now``: the last recorded time the clock has seen."""

    per_turn: int | None
    total: int | None
    increment: int
    on_timeout: str
    running_for: int | None
    turn_started: str | None
    deadline: str | None
    remaining_ms: list[int]
    now: str | None


def time_control_problem(control: clk.TimeControl | msgspec.UnsetType) -> str | None:
    """Why a creation's time control cannot be used, or None (also for no time control)."""
    return control.problem() if isinstance(control, clk.TimeControl) else None


def out_of_game(state: GameState) -> set[int]:
    """Seats that resigned or were removed: they rank after everyone else and never win."""
    return {n for n, seat in enumerate(state.seats) if seat.status in OUT_OF_GAME}


def owner(state: GameState) -> int:
    """The seat whose time runs: the seat to move, while it plays for itself."""
    playing = state.phase in PLAY_PHASES and state.current >= 0
    return state.current if playing and state.seats[state.current].status == "playing" else -1


def after_event(state: GameState, event: e.Event) -> GameState:
    """The clock after ``event`` (called by ``evolve`` for games with a clock)."""
    if isinstance(event, e.GameCreated):
        control = event.clock
        if not isinstance(control, clk.TimeControl):
            return state
        return replace(state, clock=clk.start(control, event.players))
    assert state.clock is not None
    now = event.cause.time if event.cause is not None else None
    ticked = clk.tick(state.clock, now, owner(state), state.turn)
    return state if ticked is state.clock else replace(state, clock=ticked)


def clock_view(state: GameState) -> ClockView | None:
    clock = state.clock
    if clock is None:
        return None
    control = clock.control
    deadline = clk.deadline_ms(clock)
    started = clock.turn_started_ms
    return ClockView(
        per_turn=control.per_turn,
        total=control.total,
        increment=control.increment,
        on_timeout=control.on_timeout,
        running_for=clock.owner if clock.owner >= 0 else None,
        turn_started=None if started is None else clk.iso(started),
        deadline=None if deadline is None else clk.iso(deadline),
        remaining_ms=list(clock.remaining_ms),
        now=None if clock.now_ms is None else clk.iso(clock.now_ms),
    )


# --- evolve ------------------------------------------------------------------------------------


def _with_seat(s: GameState, seat: int, **changes: Any) -> tuple[SeatState, ...]:
    seats = list(s.seats)
    seats[seat] = replace(seats[seat], **changes)
    return tuple(seats)


def _left(s: GameState, ev: e.PlayerLeft) -> GameState:
    assert ev.seat is not None
    return replace(s, seats=_with_seat(s, ev.seat, name=None))


def _cancelled(s: GameState, _: e.GameCancelled) -> GameState:
    return replace(s, phase="cancelled", current=-1)


def _timed_out(s: GameState, ev: e.SeatTimedOut) -> GameState:
    assert ev.seat is not None
    if ev.on_timeout == "bot":
        return replace(s, seats=_with_seat(s, ev.seat, status="bot"))
    return s


def _reclaimed(s: GameState, ev: e.SeatReclaimed) -> GameState:
    assert ev.seat is not None
    return replace(s, seats=_with_seat(s, ev.seat, status="playing"))


def _resigned(s: GameState, ev: e.SeatResigned) -> GameState:
    assert ev.seat is not None
    seat = s.seats[ev.seat]
    new_status = "resigned" if ev.reason == "resigned" else "removed"
    return replace(
        s,
        seats=_with_seat(s, ev.seat, hand=(), reserve=(), status=new_status),
        box_dominoes=(*s.box_dominoes, *seat.hand, *seat.reserve),
    )


EVOLVERS: dict[type[e.Event], Any] = {
    e.PlayerLeft: _left,
    e.GameCancelled: _cancelled,
    e.SeatTimedOut: _timed_out,
    e.SeatResigned: _resigned,
    e.SeatReclaimed: _reclaimed,
}


# --- decide ------------------------------------------------------------------------------------


def _lobby_seat(s: GameState, seat: int) -> None:
    if s.phase == "cancelled":
        raise GameOver("The game was cancelled.")
    if s.phase != "lobby":
        raise WrongPhase("The game has started: a player can only resign now.")
    if not 0 <= seat < s.players:
        raise InvalidCommand(f"There is no seat {seat} in a {s.players}-player game.")
    if s.seats[seat].name is None:
        raise InvalidCommand(f"Seat {seat} has no player.")


def _leave(b: Batch, cmd: c.LeaveGame) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft(game_id=b.game_id, version=b.next_version, seat=cmd.seat, reason="left"))


def _remove_player(b: Batch, cmd: c.RemovePlayer) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft(game_id=b.game_id, version=b.next_version, seat=cmd.seat, reason="removed"))


def _cancel(b: Batch, _: c.CancelGame) -> None:
    s = b.state
    if s.phase == "cancelled":
        raise GameOver("The game was cancelled already.")
    if s.phase != "lobby":
        raise WrongPhase("Only a game that has not started can be cancelled.")
    b.emit(e.GameCancelled(game_id=b.game_id, version=b.next_version))


def _in_play(s: GameState, seat: int) -> SeatState:
    if s.phase == "lobby":
        raise WrongPhase("The game has not started: leave the lobby instead.")
    if s.phase not in PLAY_PHASES:
        raise GameOver("The game is over.")
    if not 0 <= seat < s.players:
        raise InvalidCommand(f"There is no seat {seat} in a {s.players}-player game.")
    return s.seats[seat]


def _resign(b: Batch, cmd: c.Resign) -> None:
    if _in_play(b.state, cmd.seat).status in OUT_OF_GAME:
        raise WrongPhase("This seat is out of the game already.")
    remove(b, cmd.seat, "resigned")


def _claim_timeout(b: Batch, cmd: c.ClaimTimeout) -> None:
    s: GameState = b.state
    _in_play(s, cmd.seat)
    if s.clock is None:
        raise InvalidCommand("This game has no clock.")
    colour = COLOURS[s.seats[cmd.seat].colour]
    if s.clock.owner != cmd.seat:
        raise ClockRunning(f"{colour.capitalize()}'s time is not running.")
    deadline = clk.deadline_ms(s.clock)
    now = b.cause.time if b.cause is not None else None
    if now is None or deadline is None:
        raise InvalidCommand("A timeout is decided at a recorded time; none was given.")
    left = deadline - clk.epoch_ms(now)
    if left > 0:
        raise ClockRunning(f"{colour.capitalize()} has {left / 1000:.1f} s left.")
    action = s.clock.control.on_timeout
    b.emit(
        e.SeatTimedOut(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            deadline=clk.iso(deadline),
            on_timeout=action,
        )
    )
    if action == "remove":
        remove(b, cmd.seat, "timeout")


def _reclaim(b: Batch, cmd: c.ReclaimSeat) -> None:
    status = _in_play(b.state, cmd.seat).status
    if status != "bot":
        colour = COLOURS[b.state.seats[cmd.seat].colour].capitalize()
        how = "plays for itself" if status == "playing" else "is out of the game"
        raise NotABotSeat(f"No bot plays {colour}'s seat: it {how}.")
    b.emit(e.SeatReclaimed(game_id=b.game_id, version=b.next_version, seat=cmd.seat))


def remove(b: Batch, seat: int, reason: str) -> None:
    """Take ``seat`` out of the game: its dominoes go back to the box unseen, the turn passes
    on if it was its turn, and the game goes to the final scoring once fewer than two seats
    are left in it."""
    s: GameState = b.state
    was_current = s.current == seat
    held = len(s.seats[seat].hand) + len(s.seats[seat].reserve)
    b.emit(
        e.SeatResigned(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat,
            reason=reason,
            dominoes_returned=held,
        )
    )
    s = b.state
    left = [n for n, st in enumerate(s.seats) if st.status not in OUT_OF_GAME]
    if len(left) < 2:
        b.emit(
            e.TurnEnded(
                game_id=b.game_id,
                version=b.next_version,
                seat=s.current if s.current >= 0 else seat,
                next_seat=None,
            )
        )
    elif was_current:
        end_turn(b, seat)


DECIDERS: dict[type[c.Command], Any] = {
    c.LeaveGame: _leave,
    c.RemovePlayer: _remove_player,
    c.CancelGame: _cancel,
    c.Resign: _resign,
    c.ClaimTimeout: _claim_timeout,
    c.ReclaimSeat: _reclaim,
}


def play_on(b: Batch, deciders: dict[type[c.Command], Any]) -> None:
    """While the turn is a bot-played seat's, play its first legal action (never a cloud
    action: every phase lists a plain move before them)."""
    while b.state.phase in PLAY_PHASES and b.state.seats[b.state.current].status == "bot":
        action = legal_actions(b.state, b.state.current)[0]
        deciders[type(action)](b, action)
