"""Turn clocks, timeouts, resigning, leaving and cancelling, decided by the pure core from the
recorded times (renature.clock, renature.seating; docs/rules.md "Leaving, resigning, clocks")."""

from __future__ import annotations

import msgspec
import pytest

from renature import clock as clk
from renature import commands as c
from renature import events as e
from renature.audit import audit
from renature.errors import GameOver, InvalidCommand, RuleError, WrongPhase
from renature.game import replay
from renature.rules import execute, legal_actions
from renature.seating import ClockRunning
from renature.state import GameState
from renature.view import view

T0 = clk.epoch_ms("2026-01-01T12:00:00+00:00")


def at(seconds: float) -> str:
    return clk.iso(T0 + int(seconds * 1000))


class Game:
    """A game fed through ``execute`` with explicit times, keeping every event."""

    def __init__(self, players: int = 2, control: clk.TimeControl | None = None) -> None:
        self.state: GameState | None = None
        self.events: list[e.Event] = []
        self.time = 0.0
        create = c.CreateGame(game_id="g", players=players, seed="clock-seed")
        if control is not None:
            create = msgspec.structs.replace(create, clock=control)
        self.run(create)

    def run(self, command: c.Command, after: float = 1.0) -> list[e.Event]:
        self.time += after
        events, self.state = execute(
            self.state, command, command_id=f"c{len(self.events)}", time=at(self.time)
        )
        self.events += events
        return events

    @property
    def s(self) -> GameState:
        assert self.state is not None
        return self.state

    def lobby(self) -> None:
        for seat in range(self.s.players):
            self.run(c.JoinGame(seat, f"p{seat}"))

    def start(self) -> None:
        self.lobby()
        self.run(c.StartGame())

    def play_until_over(self, limit: int = 2000) -> None:
        for _ in range(limit):
            if self.s.phase == "final_scoring":
                self.run(c.FinishGame(seed="clock-seed"))
            if self.s.phase == "finished":
                return
            self.run(legal_actions(self.s, self.s.current)[0])
        raise AssertionError("the game did not end")


def test_iso_times_round_trip_and_take_offsets() -> None:
    assert clk.epoch_ms("1970-01-01T00:00:00Z") == 0
    assert clk.epoch_ms("2026-11-23T11:24:45.123456+00:00") == clk.epoch_ms(
        "2026-11-23T12:24:45.123+01:00"
    )
    assert clk.iso(clk.epoch_ms("2024-02-29T23:59:59.999Z")) == "2024-02-29T23:59:59.999Z"
    with pytest.raises(ValueError, match="ISO"):
        clk.epoch_ms("yesterday")


@pytest.mark.parametrize(
    "control",
    [
        clk.TimeControl(),
        clk.TimeControl(per_turn=30, total=300),
        clk.TimeControl(per_turn=0),
        clk.TimeControl(per_turn=30, increment=5),
    ],
)
def test_a_time_control_must_make_sense(control: clk.TimeControl) -> None:
    with pytest.raises(InvalidCommand):
        Game(control=control)


def test_a_game_without_a_clock_records_the_bytes_it_always_did() -> None:
    game = Game()
    created = game.events[0]
    assert b'"clock"' not in e.encode(created)
    assert game.s.clock is None
    assert view(game.s, None).clock is None


def test_a_timeout_is_refused_before_the_deadline_and_a_bot_plays_on_after_it() -> None:
    game = Game(control=clk.TimeControl(per_turn=30, on_timeout="bot"))
    game.start()
    shown = view(game.s, 1).clock
    assert shown is not None
    assert shown.running_for == 0
    assert shown.deadline == at(game.time + 30)
    with pytest.raises(ClockRunning, match="left"):
        game.run(c.ClaimTimeout(0), after=29)
    with pytest.raises(ClockRunning, match="not running"):
        game.run(c.ClaimTimeout(1), after=2)
    events = game.run(c.ClaimTimeout(0), after=0)
    assert isinstance(events[0], e.SeatTimedOut)
    assert events[0].on_timeout == "bot"
    assert game.s.seats[0].status == "bot"
    # The bot played seat 0's turn in the same batch: seat 1 is to move, its clock running.
    assert isinstance(events[-1], e.TurnEnded)
    assert game.s.current == 1
    assert view(game.s, 0).seats[0].status == "bot"
    game.play_until_over()  # seat 1 plays; each time the turn passes, the bot plays seat 0
    report = audit(game.events)
    assert report.ok, report.first_bad
    assert replay(game.events) == game.s


def test_a_removed_seat_ends_a_two_player_game_and_cannot_win() -> None:
    game = Game(control=clk.TimeControl(total=60, on_timeout="remove"))
    game.start()
    game.run(legal_actions(game.s, 0)[0], after=10)  # seat 0 uses 10 s of its 60
    while game.s.current == 0:
        game.run(legal_actions(game.s, 0)[0], after=0)
    assert game.s.clock is not None
    assert game.s.clock.remaining_ms[0] == 50_000  # 60 - 10
    with pytest.raises(ClockRunning):
        game.run(c.ClaimTimeout(1), after=59)
    events = game.run(c.ClaimTimeout(1), after=2)
    assert [type(ev) for ev in events] == [e.SeatTimedOut, e.SeatResigned, e.TurnEnded]
    assert game.s.seats[1].status == "removed"
    assert game.s.seats[1].hand == ()
    assert game.s.phase == "final_scoring"
    game.run(c.FinishGame(seed="clock-seed"))
    assert game.s.winners == (0,)
    assert game.s.result[-1] == 1
    assert audit(game.events).ok


def test_an_increment_is_added_to_the_bank_once_the_turn_passes() -> None:
    game = Game(control=clk.TimeControl(total=100, increment=5))
    game.start()
    while game.s.current == 0:
        game.run(legal_actions(game.s, 0)[0], after=3)
    assert game.s.clock is not None
    spent = 3 * (game.s.turn + 1)  # the number of commands of seat 0's turn, 3 s each
    assert game.s.clock.remaining_ms[0] <= 100_000 - 3_000 + 5_000
    assert game.s.clock.remaining_ms[0] > 100_000 - spent * 1000
    assert game.s.clock.remaining_ms[1] == 100_000


def test_a_resigned_seat_is_skipped_and_its_dominoes_go_to_the_box() -> None:
    game = Game(players=3)
    game.start()
    held = len(game.s.seats[1].hand) + len(game.s.seats[1].reserve)
    box = len(game.s.box_dominoes)
    events = game.run(c.Resign(1))
    assert [type(ev) for ev in events] == [e.SeatResigned]
    assert events[0].dominoes_returned == held
    assert len(game.s.box_dominoes) == box + held
    assert game.s.current == 0  # seat 0 keeps its turn
    with pytest.raises(WrongPhase):
        game.run(c.Resign(1))
    seen = set()
    for _ in range(30):
        seen.add(game.s.current)
        game.run(legal_actions(game.s, game.s.current)[0])
    assert 1 not in seen
    game.run(c.Resign(game.s.current))  # one seat left: straight to the final scoring
    assert game.s.phase == "final_scoring"


def test_the_seat_to_move_resigning_passes_the_turn() -> None:
    game = Game(players=3)
    game.start()
    events = game.run(c.Resign(0))
    assert isinstance(events[-1], e.TurnEnded)
    assert game.s.current == 1


def test_leaving_removing_and_cancelling_a_lobby() -> None:
    game = Game(players=3)
    game.lobby()
    game.run(c.LeaveGame(1))
    assert game.s.seats[1].name is None
    with pytest.raises(InvalidCommand, match="no player"):
        game.run(c.LeaveGame(1))
    with pytest.raises(InvalidCommand, match="no seat"):
        game.run(c.RemovePlayer(3))
    (removed,) = game.run(c.RemovePlayer(2))
    assert isinstance(removed, e.PlayerLeft)
    assert removed.reason == "removed"
    game.run(c.JoinGame(1, "again"))
    with pytest.raises(WrongPhase, match="no player"):
        game.run(c.StartGame())
    game.run(c.CancelGame())
    assert game.s.phase == "cancelled"
    for command in (c.CancelGame(), c.LeaveGame(0), c.Resign(0), c.ClaimTimeout(0)):
        with pytest.raises(RuleError):
            game.run(command)


def test_lobby_commands_are_refused_once_the_game_started() -> None:
    game = Game()
    game.start()
    for command in (c.LeaveGame(0), c.RemovePlayer(1), c.CancelGame()):
        with pytest.raises(WrongPhase):
            game.run(command)
    with pytest.raises(InvalidCommand, match="no clock"):
        game.run(c.ClaimTimeout(0))


def test_resigning_before_the_start_or_after_the_end_is_refused() -> None:
    game = Game()
    game.lobby()
    with pytest.raises(WrongPhase, match="leave"):
        game.run(c.Resign(0))
    game.run(c.StartGame())
    game.play_until_over()
    with pytest.raises(GameOver):
        game.run(c.Resign(0))
