"""Turn clocks, timeouts and a timed-out seat taken back, resigning, leaving and cancelling,
decided by the pure core from the recorded times (renature.clock, renature.seating; docs/rules.md
"Leaving, resigning, clocks")."""

from __future__ import annotations

import msgspec
import pytest
from msgspec.structs import replace

from renature import clock as clk
from renature import commands as c
from renature import events as e
from renature.audit import audit
from renature.errors import GameOver, InvalidCommand, RuleError, WrongPhase
from renature.game import replay
from renature.rules import execute, legal_actions
from renature.seating import ClockRunning, NotABotSeat
from renature.state import GameState
from renature.view import view
from support.chain import rechained

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
    resigned = events[0]
    assert isinstance(resigned, e.SeatResigned)
    assert resigned.dominoes_returned == held
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


# --- a timed-out seat taken back ---------------------------------------------------------------


def timed_out(control: clk.TimeControl, players: int = 2) -> Game:
    """A started game whose seat 0 ran out of time on its first turn (a bot played it on)."""
    game = Game(players=players, control=control)
    game.start()
    assert game.s.clock is not None
    deadline = clk.deadline_ms(game.s.clock)
    assert deadline is not None
    game.run(c.ClaimTimeout(0), after=(deadline - T0) / 1000 - game.time)
    assert game.s.seats[0].status == "bot"
    return game


def test_a_player_takes_back_the_seat_a_bot_plays_and_plays_the_next_turn_themselves() -> None:
    game = timed_out(clk.TimeControl(per_turn=30, on_timeout="bot"))
    assert game.s.current == 1
    assert game.s.clock is not None
    deadline = clk.deadline_ms(game.s.clock)
    events = game.run(c.ReclaimSeat(0), after=2)
    assert [type(ev) for ev in events] == [e.SeatReclaimed]
    assert events[0].seat == 0
    assert game.s.seats[0].status == "playing"
    assert view(game.s, 1).seats[0].status == "playing"
    # The hand-back charges nobody: seat 1's turn runs on to the same deadline.
    assert game.s.clock.owner == 1
    assert clk.deadline_ms(game.s.clock) == deadline
    while game.s.current == 1:
        last = game.run(legal_actions(game.s, 1)[0], after=1)
    # No bot plays seat 0 any more: the turn waits for its player, whose clock runs.
    assert isinstance(last[-1], e.TurnEnded)
    assert last[-1].next_seat == 0
    assert game.s.current == 0
    assert legal_actions(game.s, 0)
    assert game.s.clock.owner == 0
    assert clk.deadline_ms(game.s.clock) == T0 + int((game.time + 30) * 1000)
    # The player may run out of time again: a bot plays on again.
    (again, *_) = game.run(c.ClaimTimeout(0), after=30)
    assert isinstance(again, e.SeatTimedOut)
    assert game.s.seats[0].status == "bot"
    game.play_until_over()
    assert replay(game.events) == game.s
    assert audit(game.events).ok


def test_a_seat_taken_back_in_total_mode_plays_on_with_what_is_left_of_its_bank() -> None:
    game = timed_out(clk.TimeControl(total=60, increment=5, on_timeout="bot"))
    assert game.s.clock is not None
    started = game.s.clock.turn_started_ms
    assert game.s.clock.remaining_ms[0] == 5_000  # the bank ran out; the turn's increment
    game.run(c.ReclaimSeat(0), after=4)
    assert game.s.clock.owner == 1
    assert game.s.clock.turn_started_ms == started  # seat 1's turn is not restarted
    while game.s.current == 1:
        game.run(legal_actions(game.s, 1)[0], after=2)
    assert started is not None
    used = T0 + int(game.time * 1000) - started
    assert game.s.clock.remaining_ms[1] == 60_000 - used + 5_000
    assert game.s.clock.remaining_ms[0] == 5_000
    assert clk.deadline_ms(game.s.clock) == T0 + int(game.time * 1000) + 5_000


def test_a_seat_is_taken_back_only_from_a_bot_and_only_during_the_game() -> None:
    game = Game(players=3, control=clk.TimeControl(per_turn=30, on_timeout="bot"))
    game.lobby()
    with pytest.raises(WrongPhase):
        game.run(c.ReclaimSeat(0))
    game.run(c.StartGame())
    with pytest.raises(NotABotSeat, match="plays for itself") as refused:
        game.run(c.ReclaimSeat(1))
    assert refused.value.code == "not_a_bot_seat"
    with pytest.raises(InvalidCommand, match="no seat"):
        game.run(c.ReclaimSeat(3))
    game.run(c.Resign(2))
    with pytest.raises(NotABotSeat, match="out of the game"):
        game.run(c.ReclaimSeat(2))
    game.run(c.ClaimTimeout(0), after=30)
    game.run(c.ReclaimSeat(0))
    taken_back = game.s
    with pytest.raises(NotABotSeat):
        game.run(c.ReclaimSeat(0))  # taken back once: it plays for itself
    assert game.s is taken_back  # a refusal changes nothing
    game.play_until_over()
    with pytest.raises(GameOver):
        game.run(c.ReclaimSeat(0))


def test_both_hand_overs_are_audited_and_a_forged_hand_back_fails_the_audit() -> None:
    game = timed_out(clk.TimeControl(per_turn=30, on_timeout="bot"))
    game.run(c.ReclaimSeat(0), after=1)
    report = audit(game.events)
    assert report.ok, report.first_bad
    recorded = [ev.cause.command for ev in game.events if ev.cause is not None]
    assert c.ClaimTimeout(0) in recorded
    assert c.ReclaimSeat(0) in recorded
    # A hand-back without the command that asked for it (added to the batch before it).
    bare = timed_out(clk.TimeControl(per_turn=30, on_timeout="bot"))
    forged = e.SeatReclaimed(game_id="g", version=len(bare.events) + 1, seat=0)
    report = audit(rechained([*bare.events, forged]))
    assert not report.ok
    assert report.first_bad is not None
    assert (report.first_bad.version, report.first_bad.check) == (forged.version, "rules")
    # A hand-back of a seat no bot plays, its command forged too.
    cause = e.Cause(c.ReclaimSeat(1), "forged", at(bare.time + 1))
    forged_too = replace(forged, seat=1, cause=cause)
    report = audit(rechained([*bare.events, forged_too]))
    assert report.first_bad is not None
    assert (report.first_bad.version, report.first_bad.check) == (forged.version, "legality")
    assert "No bot plays" in report.first_bad.message
