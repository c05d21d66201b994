"""Renaissance's seats and clock (rulings 17 and 18): leaving and removing in the lobby,
cancelling before the start, resigning in play, losing on time; each decided by the core and
re-decided by the audit."""

from __future__ import annotations

from typing import Any

import pytest

from gameplatform.clock import TimeControl
from renaissance import commands as c
from renaissance import events as e
from renaissance.adapter import GAME
from renaissance.errors import ClockRunning, GameOver, InvalidCommand, WrongPhase
from renaissance.state import GameState

TIME = "2026-11-25T10:00:00.000+00:00"


class Played:
    """A game played command by command, its events kept."""

    def __init__(self) -> None:
        self.state: GameState | None = None
        self.log: list[e.Event] = []

    @property
    def now(self) -> GameState:
        """The state after the commands run so far (one at least)."""
        assert self.state is not None
        return self.state

    def run(self, command: c.Command) -> list[e.Event]:
        events, self.state = GAME.execute(self.state, command, time=TIME)
        self.log.extend(events)
        return events


def started(moves: int) -> Played:
    game = Played()
    for command in GAME.setup_commands("seats", "seed", 2, ["ada", "bo"]):
        game.run(command)
    bot = GAME.make_bot("greedy", "seed")
    for _ in range(moves):
        seat = GAME.to_move(game.now)
        assert seat is not None
        game.run(bot.choose(game.now, seat))
    return game


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_that_resigns_loses_and_the_audit_re_decides_it(seat: int) -> None:
    game = started(moves=12)
    events = game.run(c.Resign(seat))
    assert [type(event) for event in events] == [e.SeatResigned, e.GameEnded]
    ended = events[-1]
    assert isinstance(ended, e.GameEnded)
    assert (ended.winners, ended.ranking) == ([1 - seat], [1 - seat, seat])
    table = GAME.table(game.now)
    assert table.over
    assert table.winners == [1 - seat]
    assert table.statuses[seat] == "resigned"
    assert GAME.closes(ended)
    assert GAME.ends(ended)
    assert GAME.to_move(game.now) is None
    assert GAME.legal_actions(game.now, 1 - seat) == []
    report: Any = GAME.audit(game.log)
    assert report.ok, report.findings
    assert report.winners == [1 - seat]
    with pytest.raises(GameOver):
        game.run(c.Resign(1 - seat))


def test_the_lobby_frees_seats_and_the_host_cancels() -> None:
    game = Played()
    create, join_0, join_1, _start = GAME.setup_commands("lobby", "seed", 2, ["ada", "bo"])
    game.run(create)
    game.run(join_0)
    assert [type(ev) for ev in game.run(c.LeaveGame(0))] == [e.PlayerLeft]
    assert GAME.table(game.now).names == [None, None]
    with pytest.raises(InvalidCommand):
        game.run(c.RemovePlayer(0))  # nobody sits there
    game.run(join_0)
    game.run(join_1)
    removed = game.run(c.RemovePlayer(1))
    assert isinstance(removed[0], e.PlayerLeft)
    assert removed[0].reason == "removed"
    with pytest.raises(WrongPhase):
        game.run(c.Resign(0))  # not started: leave instead
    cancelled = game.run(c.CancelGame())
    assert GAME.closes(cancelled[-1])
    assert not GAME.ends(cancelled[-1])
    assert game.now.phase == "cancelled"
    assert GAME.to_move(game.now) is None
    for late in (c.CancelGame(), c.StartGame()):
        with pytest.raises((GameOver, WrongPhase)):
            game.run(late)
    report: Any = GAME.audit(game.log)
    assert report.ok, report.findings


def test_a_started_game_cannot_be_left_or_cancelled() -> None:
    game = started(moves=2)
    for command in (c.LeaveGame(0), c.RemovePlayer(1), c.CancelGame()):
        with pytest.raises(WrongPhase):
            game.run(command)


def test_a_seat_whose_time_runs_out_loses_at_the_recorded_deadline() -> None:
    game = Played()
    control = TimeControl(per_turn=30, on_timeout="remove")
    create = GAME.create_command("clocked", 2, None, {"time_control": control})
    moments = iter(f"2026-11-25T10:00:{second:02d}.000+00:00" for second in range(60))

    def at(command: c.Command) -> list[e.Event]:
        events, game.state = GAME.execute(game.state, command, time=next(moments))
        game.log.extend(events)
        return events

    at(GAME.with_seed(create, "seed"))
    at(c.JoinGame(0, "ada"))
    at(c.JoinGame(1, "bo"))
    at(c.StartGame())  # 10:00:03: seat 0's 30 seconds run
    clock = GAME.clock(game.now)
    assert clock is not None
    assert (clock.running_for, clock.per_turn) == (0, 30)
    with pytest.raises(ClockRunning):
        at(c.ClaimTimeout(0))  # 10:00:04, 29 s before the deadline
    with pytest.raises(ClockRunning):
        at(c.ClaimTimeout(1))  # seat 1's time does not run
    for _ in range(28):
        next(moments)
    events = at(c.ClaimTimeout(0))  # 10:00:34, past 10:00:33
    assert [type(event) for event in events] == [e.SeatTimedOut, e.SeatResigned, e.GameEnded]
    assert GAME.table(game.now).winners == [1]
    assert GAME.table(game.now).statuses == ["removed", "playing"]
    report: Any = GAME.audit(game.log)
    assert report.ok, report.findings
    with pytest.raises(InvalidCommand):  # a timeout loses: no bot plays on in Renaissance
        GAME.execute(None, c.CreateGame("g", "s", clock=TimeControl(per_turn=30)))
