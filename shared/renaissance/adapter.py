"""Renaissance behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, get_args

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Award, Clock, Game, Outcome, Table, platform_clock
from renaissance import commands as c
from renaissance import corpus as recorded
from renaissance import events as e
from renaissance import hosting, search_model
from renaissance.audit import audit
from renaissance.bots import BOT_NAMES, Bot, determinize, make_bot
from renaissance.explain import Explanation, explain
from renaissance.game import outcome
from renaissance.hosting import Options
from renaissance.legal_moves import legal_actions
from renaissance.picture import board_svg, board_text
from renaissance.rules import RULES
from renaissance.state import GameState, Phase
from renaissance.view import GameView, view, visible_event
from renaissance.words import describe


# long: the adapter forwards every member of the platform's Game protocol to the core
class RenaissanceGame(CoreAdapter[GameState, c.Command, e.Event]):
    name: str = "renaissance"
    title: str = "Renaissance (Masahiro Nakajima, 2012)"
    player_counts: tuple[int, ...] = (2,)
    phases: tuple[str, ...] = get_args(Phase)
    boards: tuple[str, ...] = ("standard",)
    bot_names: tuple[str, ...] = (*BOT_NAMES, search.NAME)
    search_budget: search.Budget = search_model.BUDGET
    command_type: Any = c.AnyCommand
    seat_command_type: Any = c.SeatCommand
    create_type: Any = c.CreateGame
    join_type: Any = c.JoinGame
    start_type: Any = c.StartGame
    cancel_type: Any = c.CancelGame
    leave_type: Any = c.LeaveGame
    remove_type: Any = c.RemovePlayer
    resign_type: Any = c.Resign
    timeout_type: Any = c.ClaimTimeout
    event_type: Any = e.AnyEvent
    rules = RULES
    hidden_information: bool = True  # a Janken's sealed hand, until both are shown
    options_type: Any = Options
    seed_secret: bool = False
    state_type: Any = GameState
    view_type: Any = GameView
    audit_type: Any = AuditReport
    explanation_type: Any = Explanation

    def setup_commands(
        self,
        game_id: str,
        seed: str,
        players: int,
        names: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[c.Command]:
        return hosting.setup_with(game_id, seed, names, options)

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> c.Command:
        return hosting.create_command(game_id, players, options)

    def with_seed(
        self, command: c.Command, seed: str, salt: str = "", chosen: bool = False
    ) -> c.Command:
        return hosting.with_seed(command, seed)

    def needs_seed(self, command: c.Command) -> bool:
        return hosting.needs_seed(command)

    def public_command(self, command: c.Command) -> c.Command:
        return hosting.public_command(command)

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def is_closed(self, state: GameState) -> bool:
        return hosting.is_closed(state)

    def starts(self, event: e.Event) -> bool:
        return hosting.starts(event)

    def ends(self, event: e.Event) -> bool:
        return hosting.ends(event)

    def closes(self, event: e.Event) -> bool:
        return hosting.closes(event)

    def to_move(self, state: GameState) -> int | None:
        return hosting.to_move(state)

    def finishing_command(self, state: GameState, seed: str, salt: str = "") -> c.Command | None:
        return None  # nothing is secret: the game ends with the last player's command

    def table(self, state: GameState) -> Table:
        return hosting.table(state, self.boards[0])

    def points_awarded(self, event: e.Event) -> list[Award]:
        return hosting.points_awarded(event)

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def visible_event(self, event: e.Event, seat: int | None) -> e.Event:
        return visible_event(event, seat)

    def state_json(self, state: GameState, seat: int | None) -> bytes:
        return hosting.state_json(state, seat)

    def decode_state(self, data: bytes | str) -> GameState:
        return hosting.decode_state(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def determinize(self, state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
        return determinize(state, seat, rng, seed)

    def evaluate(self, state: GameState) -> list[float]:
        return search_model.evaluate(state)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> Outcome:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, Outcome]:
        return hosting.simulate(seed, bots, options, make=self.make_bot)

    def components(self) -> dict[str, Any]:
        return hosting.components_json()

    def picture_svg(self, state: GameState, title: str = "") -> str:
        return board_svg(state, title)

    def clock(self, state: GameState) -> Clock | None:
        return platform_clock(state.clock)

    def progress(self, state: GameState) -> str:
        return hosting.progress(state)

    def picture_text(self, state: GameState) -> str:
        return board_text(state)

    def describe(self, item: Any, seats: Sequence[str]) -> str:
        return describe(item, seats)

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> Explanation:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> AuditReport:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return list(recorded.records())

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        return recorded.check_line(line)


GAME: Game[GameState, c.Command, e.Event] = RenaissanceGame()
"""The adapter the registry hosts (mypy checks it against the `Game` protocol)."""
