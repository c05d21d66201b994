"""Renaissance's seats (ruling 13): leaving and removing in the lobby, cancelling before the
start, resigning in play; each decided by the core and re-decided by the audit."""

from __future__ import annotations

from typing import Any

import pytest

from gameplatform import get_game
from renaissance import commands as c
from renaissance import events as e
from renaissance.errors import GameOver, InvalidCommand, WrongPhase

GAME = get_game("renaissance")
TIME = "2026-11-25T10:00:00.000+00:00"


class Played:
    """A game played command by command, its events kept."""

    def __init__(self) -> None:
        self.state: Any = None
        self.log: list[e.Event] = []

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
        seat = GAME.to_move(game.state)
        game.run(bot.choose(game.state, seat))
    return game


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_that_resigns_loses_and_the_audit_re_decides_it(seat: int) -> None:
    game = started(moves=12)
    events = game.run(c.Resign(seat))
    assert [type(event) for event in events] == [e.SeatResigned, e.GameEnded]
    ended = events[-1]
    assert isinstance(ended, e.GameEnded)
    assert (ended.winners, ended.ranking) == ([1 - seat], [1 - seat, seat])
    table = GAME.table(game.state)
    assert table.over
    assert table.winners == [1 - seat]
    assert table.statuses[seat] == "resigned"
    assert GAME.closes(ended)
    assert GAME.ends(ended)
    assert GAME.to_move(game.state) is None
    assert GAME.legal_actions(game.state, 1 - seat) == []
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
    assert GAME.table(game.state).names == [None, None]
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
    assert game.state.phase == "cancelled"
    assert GAME.to_move(game.state) is None
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
