"""Seats coming and going (docs/rules-goofspiel.md, rulings 9 to 12): the lobby's leave, remove
and cancel, whose time runs, a timeout's bot or removal, and a seat taken back."""

from __future__ import annotations

import msgspec
import pytest
from gs_clocks import T0, at, clocked, run
from gs_games import started

from gameplatform.clock import TimeControl, epoch_ms
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.adapter import GAME, GoofspielGame, options_of
from goofspiel.errors import (
    ClockRunning,
    GameOver,
    InvalidCommand,
    NotPlayedByBot,
    PlayedByBot,
    RuleError,
    WrongPhase,
)
from goofspiel.rules import execute
from goofspiel.state import GameState
from goofspiel.view import view


def lobby(*names: str) -> GameState:
    _, state = execute(None, c.CreateGame(game_id="g1", seed="lobby"))
    for seat, name in enumerate(names):
        _, state = execute(state, c.JoinGame(seat=seat, name=name))
    return state


# --- ruling 9: the lobby --------------------------------------------------------------------


def test_a_player_may_leave_the_lobby_and_the_seat_opens_again() -> None:
    state = lobby("Ada", "Bo")
    events, state = execute(state, c.LeaveGame(seat=1))
    assert [type(ev) for ev in events] == [e.PlayerLeft]
    left = events[0]
    assert isinstance(left, e.PlayerLeft)
    assert (left.seat, left.reason) == (1, "left")
    assert state.names == ("Ada", None)
    with pytest.raises(WrongPhase, match="Both seats"):
        execute(state, c.StartGame())
    _, state = execute(state, c.JoinGame(seat=1, name="Cy"))
    assert state.names == ("Ada", "Cy")


def test_the_host_frees_a_lobby_seat() -> None:
    events, state = execute(lobby("Ada", "Bo"), c.RemovePlayer(seat=0))
    assert isinstance(events[0], e.PlayerLeft)
    assert events[0].reason == "removed"
    assert state.names == (None, "Bo")
    assert GAME.table(state).names == [None, "Bo"]


def test_an_open_seat_cannot_be_left_or_freed() -> None:
    state = lobby("Ada")
    for command in (c.LeaveGame(seat=1), c.RemovePlayer(seat=1)):
        with pytest.raises(InvalidCommand, match="Seat 1 has no player") as refused:
            execute(state, command)
        assert refused.value.code == "invalid_command"


def test_nobody_leaves_or_is_freed_once_the_game_has_started() -> None:
    _, state = started()
    for command in (c.LeaveGame(seat=0), c.RemovePlayer(seat=1)):
        with pytest.raises(WrongPhase, match="only resign"):
            execute(state, command)


def test_the_host_cancels_a_game_before_its_start_and_nothing_follows() -> None:
    events, state = execute(lobby("Ada"), c.CancelGame())
    assert [type(ev) for ev in events] == [e.GameCancelled]
    assert state.phase == "cancelled"
    assert GAME.closes(events[0])
    assert GAME.is_closed(state)
    assert not GAME.is_over(state)
    assert GAME.table(state).phase == "cancelled"
    assert GAME.clock(state) is None
    for command in (
        c.JoinGame(seat=1, name="Bo"),
        c.StartGame(),
        c.LeaveGame(seat=0),
        c.CancelGame(),
        c.Bid(seat=0, card=1),
        c.Resign(seat=0),
        c.ClaimTimeout(seat=0),
        c.ReclaimSeat(seat=0),
    ):
        with pytest.raises(GameOver, match="cancelled") as refused:
            execute(state, command)
        assert refused.value.code == "game_over"


def test_a_started_game_cannot_be_cancelled() -> None:
    _, state = started()
    with pytest.raises(WrongPhase, match="has not started can be cancelled"):
        execute(state, c.CancelGame())
    assert not GAME.is_closed(state)


def test_the_platform_sends_the_lobby_commands_for_goofspiel() -> None:
    assert GAME.cancel_command() == c.CancelGame()
    assert GAME.leave_command(1) == c.LeaveGame(seat=1)
    assert GAME.remove_command(0) == c.RemovePlayer(seat=0)
    assert GAME.resign_command(1) == c.Resign(seat=1)
    assert GAME.timeout_command(0) == c.ClaimTimeout(seat=0)
    assert GAME.sender_of(c.ClaimTimeout(seat=0)) == "clock"
    assert not GAME.needs_seat(c.ClaimTimeout(seat=0))  # no player claims a timeout


# --- ruling 10: whose time runs -------------------------------------------------------------


def test_the_time_of_the_seat_the_game_waits_for_runs_from_when_it_began_waiting() -> None:
    log, state = clocked(per_turn=30)
    clock = GAME.clock(state)
    assert clock is not None
    assert (clock.running_for, clock.turn_started_ms) == (0, epoch_ms(T0))
    assert clock.deadline_ms == epoch_ms(T0) + 30_000
    _, state = run(log, state, c.Bid(seat=0, card=5), 12)
    clock = GAME.clock(state)
    assert clock is not None
    assert (clock.running_for, clock.turn_started_ms) == (1, epoch_ms(at(12)))
    _, state = run(log, state, c.Bid(seat=1, card=3), 20)
    clock = GAME.clock(state)
    assert clock is not None
    assert (clock.running_for, state.turn) == (0, 2)
    assert clock.turn_started_ms == epoch_ms(at(20))
    assert view(state, None).clock == clock


def test_a_total_time_banks_each_seats_time_with_its_increment_once_a_bid() -> None:
    log, state = clocked(total=60, increment=5)
    _, state = run(log, state, c.Bid(seat=0, card=5), 10)
    _, state = run(log, state, c.Bid(seat=1, card=3), 30)
    clock = GAME.clock(state)
    assert clock is not None
    assert clock.remaining_ms == [55_000, 45_000]  # 60 - 10 + 5 and 60 - 20 + 5
    assert clock.deadline_ms == epoch_ms(at(30)) + 55_000


def test_a_timeout_claimed_before_the_deadline_is_refused_and_changes_nothing() -> None:
    _, state = clocked(per_turn=30)
    with pytest.raises(ClockRunning, match=r"has 0\.5 s left") as refused:
        execute(state, c.ClaimTimeout(seat=0), time=at(29.5))
    assert refused.value.code == "clock_running"
    with pytest.raises(InvalidCommand, match="recorded time"):
        execute(state, c.ClaimTimeout(seat=0))
    assert GAME.clock(state) is not None
    assert state.statuses == ("playing", "playing")


def test_only_the_seat_the_game_waits_for_can_run_out_of_time() -> None:
    _, state = clocked(per_turn=30)
    with pytest.raises(ClockRunning, match="Seat 1's time is not running"):
        execute(state, c.ClaimTimeout(seat=1), time=at(300))


def test_a_game_without_a_clock_has_no_timeout() -> None:
    _, state = started()
    assert GAME.clock(state) is None
    with pytest.raises(InvalidCommand, match="no clock"):
        execute(state, c.ClaimTimeout(seat=0), time=at(10_000))


def test_a_time_control_is_recorded_in_the_creation_and_checked() -> None:
    log, _ = clocked(per_turn=30, on_timeout="remove")
    created = log[0]
    assert isinstance(created, e.GameCreated)
    assert created.clock == TimeControl(per_turn=30, on_timeout="remove")
    assert created.cause is not None
    assert isinstance(created.cause.command, c.CreateGame)
    assert created.cause.command.clock == created.clock
    both = TimeControl(per_turn=30, total=60)
    with pytest.raises(InvalidCommand, match="either per_turn or total"):
        execute(None, c.CreateGame(game_id="g", seed="s", clock=both))
    read = options_of({"time_control": {"total": 300, "increment": 2, "on_timeout": "remove"}})
    assert read.problem() is None
    created_by_service = GAME.create_command("g", 2, options={"time_control": read.time_control})
    assert isinstance(created_by_service, c.CreateGame)
    assert created_by_service.clock == read.time_control
    assert options_of({"time_control": {"per_turn": 5, "increment": 1}}).problem()
    with pytest.raises(msgspec.ValidationError):
        options_of({"time_control": {"per_turn": 5, "on_timeout": "pause"}})


# --- ruling 11: what a timeout does ---------------------------------------------------------


def test_with_remove_the_seat_whose_time_runs_out_loses_whatever_the_scores() -> None:
    log, state = clocked(per_turn=30, on_timeout="remove")
    _, state = run(log, state, c.Bid(seat=0, card=1), 1)
    _, state = run(log, state, c.Bid(seat=1, card=13), 2)
    assert state.scores[1] > 0
    assert state.to_move == 0
    events, state = run(log, state, c.ClaimTimeout(seat=0), 32)
    assert [type(ev) for ev in events] == [e.SeatTimedOut]
    timed_out = events[0]
    assert isinstance(timed_out, e.SeatTimedOut)
    assert (timed_out.seat, timed_out.on_timeout, timed_out.deadline) == (0, "remove", at(32))
    assert state.phase == "final_scoring"
    clock = GAME.clock(state)
    assert clock is not None
    assert clock.running_for is None
    assert GAME.table(state).statuses == ["removed", "playing"]
    _, state = run(log, state, c.FinishGame(seed="clock-test"), 33)
    assert (state.winners, state.ranking) == ((1,), (1, 0))
    assert GAME.audit(log).ok


def test_with_bot_the_rules_bid_the_lowest_card_for_the_seat_from_then_on() -> None:
    log, state = clocked(per_turn=30, on_timeout="bot")
    events, state = run(log, state, c.ClaimTimeout(seat=0), 30)
    assert [type(ev) for ev in events] == [e.SeatTimedOut, e.BidSealed]
    bid = events[1]
    assert isinstance(bid, e.BidSealed)
    assert (bid.seat, bid.card) == (0, 1)
    assert events[1].cause is None  # the claim's batch: re-decided with it
    assert GAME.table(state).statuses == ["bot", "playing"]
    assert view(state, 1).seats[0].status == "bot"
    clock = GAME.clock(state)
    assert clock is not None
    assert clock.running_for == 1
    assert clock.turn_started_ms == epoch_ms(at(30))  # the other seat's time runs from the claim
    events, state = run(log, state, c.Bid(seat=1, card=7), 35)
    kinds = [type(ev) for ev in events]
    assert kinds == [e.BidSealed, e.BidsRevealed, e.PrizeRevealed, e.BidSealed]
    bid = events[-1]
    assert isinstance(bid, e.BidSealed)
    assert (bid.seat, bid.card) == (0, 2)
    assert state.to_move == 1
    with pytest.raises(PlayedByBot, match="take it back first") as refused:
        execute(state, c.Bid(seat=0, card=13), time=at(36))
    assert refused.value.code == "played_by_bot"


def test_after_one_seat_times_out_the_others_time_runs_and_can_run_out_too() -> None:
    log, state = clocked(per_turn=30, on_timeout="bot", cards=5)
    _, state = run(log, state, c.ClaimTimeout(seat=0), 31)
    with pytest.raises(ClockRunning, match="s left"):
        execute(state, c.ClaimTimeout(seat=1), time=at(60))
    events, state = run(log, state, c.ClaimTimeout(seat=1), 61)
    assert isinstance(events[0], e.SeatTimedOut)
    assert events[0].seat == 1
    assert state.statuses == ("bot", "bot")
    assert state.phase == "final_scoring"  # both bid the lowest card: five ties, all discarded
    assert state.scores == (0, 0)
    assert sorted(state.discarded) == [1, 2, 3, 4, 5]
    _, state = run(log, state, c.FinishGame(seed="clock-test"), 62)
    assert state.winners == (0, 1)
    report = GAME.audit(log)
    assert report.ok
    assert report.finished


def test_a_forged_early_timeout_fails_the_audit() -> None:
    from test_goofspiel_tools import resealed

    log, state = clocked(per_turn=30, on_timeout="remove")
    _, state = run(log, state, c.ClaimTimeout(seat=0), 40)
    _, state = run(log, state, c.FinishGame(seed="clock-test"), 41)
    assert GAME.audit(log).ok
    claim = next(n for n, ev in enumerate(log) if isinstance(ev, e.SeatTimedOut))
    cause = log[claim].cause
    assert cause is not None
    early = msgspec.structs.replace(cause, time=at(10))  # 20 s before the deadline
    forged = resealed(log, claim, msgspec.structs.replace(log[claim], cause=early))
    report = GAME.audit(forged)
    assert not report.ok
    assert "legality" in str(report.findings)
    assert "s left" in str(report.findings)


# --- ruling 12: a seat taken back -----------------------------------------------------------


def test_the_player_of_a_seat_a_bot_plays_may_take_it_back() -> None:
    log, state = clocked(per_turn=30, on_timeout="bot")
    _, state = run(log, state, c.ClaimTimeout(seat=0), 30)
    events, state = run(log, state, c.ReclaimSeat(seat=0), 31)
    assert [type(ev) for ev in events] == [e.SeatReclaimed]
    assert GAME.table(state).statuses == ["playing", "playing"]
    _, state = run(log, state, c.Bid(seat=1, card=4), 32)
    assert state.to_move == 0  # seat 0 bids for itself again, its time running
    clock = GAME.clock(state)
    assert clock is not None
    assert (clock.running_for, clock.turn_started_ms) == (0, epoch_ms(at(32)))
    _, state = run(log, state, c.Bid(seat=0, card=13), 33)
    assert state.shown == ((1,), (4,))
    assert GAME.audit(log).ok


def test_only_a_seat_a_bot_plays_can_be_taken_back_while_the_game_is_on() -> None:
    log, state = clocked(per_turn=30, on_timeout="bot", cards=2)
    with pytest.raises(NotPlayedByBot) as refused:
        execute(state, c.ReclaimSeat(seat=1), time=at(1))
    assert refused.value.code == "not_played_by_bot"
    _, state = run(log, state, c.ClaimTimeout(seat=0), 30)
    _, state = run(log, state, c.ReclaimSeat(seat=0), 31)
    with pytest.raises(NotPlayedByBot):
        execute(state, c.ReclaimSeat(seat=0), time=at(32))
    _, state = run(log, state, c.ClaimTimeout(seat=1), 62)
    _, state = run(log, state, c.ClaimTimeout(seat=0), 93)
    assert state.phase == "final_scoring"
    assert state.statuses == ("bot", "bot")
    with pytest.raises(GameOver, match="over"):
        execute(state, c.ReclaimSeat(seat=0), time=at(94))
    with pytest.raises(WrongPhase):
        execute(lobby("Ada"), c.ReclaimSeat(seat=0))


def test_a_seat_is_taken_back_by_its_player_through_the_platform() -> None:
    assert isinstance(GAME, GoofspielGame)
    assert GAME.reclaim_type is c.ReclaimSeat
    command = GAME.seat_command({"type": "ReclaimSeat", "seat": 1})
    assert command == c.ReclaimSeat(seat=1)
    assert GAME.needs_seat(command)
    variants = GAME.seat_command_schema()["anyOf"]
    assert any(v["properties"]["type"]["enum"] == ["ReclaimSeat"] for v in variants)


def test_every_refusal_is_a_rule_error_with_a_stable_code() -> None:
    codes = {ClockRunning.code, NotPlayedByBot.code, PlayedByBot.code, GameOver.code}
    assert codes == {"clock_running", "not_played_by_bot", "played_by_bot", "game_over"}
    assert all(issubclass(kind, RuleError) for kind in (ClockRunning, NotPlayedByBot, PlayedByBot))
