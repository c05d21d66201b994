"""Renature behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, get_args

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Award, Clock, Game, Outcome, Table, platform_clock
from renature import commands as c
from renature import corpus as recorded
from renature import determinize as sampling
from renature import events as e
from renature import hosting
from renature.audit import audit
from renature.board import BoardJson
from renature.bots import BOT_NAMES, Bot, make_bot
from renature.explain import Explanation, explain
from renature.game import outcome, setup_commands, simulate
from renature.hosting import RenatureOptions
from renature.legal_moves import legal_actions
from renature.perspective import decode_state, state_json
from renature.picture import board_svg, board_text
from renature.rules import RULES
from renature.state import GameState, Phase
from renature.view import GameView, view, visible_event


# long: the adapter forwards every member of the platform's Game protocol to the core
class RenatureGame(CoreAdapter[GameState, c.Command, e.Event]):
    name: str = "renature"
    title: str = "Renature (with the Valley expansion)"
    player_counts: tuple[int, ...] = (2, 3, 4)
    phases: tuple[str, ...] = get_args(Phase)
    boards: tuple[str, ...] = ("base", "valley", "valley-back")
    bot_names: tuple[str, ...] = (*BOT_NAMES, search.NAME)
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
    reclaim_type: Any = c.ReclaimSeat
    event_type: Any = e.AnyEvent
    rules = RULES
    hidden_information: bool = True
    seed_secret: bool = True
    state_type: Any = GameState
    state_unencoded: tuple[str, ...] = ("board",)  # static board data, loaded by board_id
    view_type: Any = GameView
    audit_type: Any = AuditReport
    explanation_type: Any = Explanation
    options_type: Any = RenatureOptions

    def setup_commands(
        self,
        game_id: str,
        seed: str,
        players: int,
        names: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[c.Command]:
        return setup_commands(game_id, players, seed, board or "base", names)

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> c.Command:
        return hosting.create_command(game_id, players, board, options)

    def with_seed(
        self, command: c.Command, seed: str, salt: str = "", chosen: bool = False
    ) -> c.Command:
        return hosting.with_seed(command, seed, salt, chosen)

    def needs_seed(self, command: c.Command) -> bool:
        return hosting.needs_seed(command)

    def public_command(self, command: c.Command) -> c.Command:
        return e.public_command(command)  # type: ignore[arg-type]  # any command of the union

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
        return hosting.finishing_command(state, seed, salt)

    def table(self, state: GameState) -> Table:
        return hosting.table(state)

    def points_awarded(self, event: e.Event) -> list[Award]:
        return hosting.points_awarded(event)

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def visible_event(self, event: e.Event, seat: int | None) -> e.Event:
        return visible_event(event, seat)

    def state_json(self, state: GameState, seat: int | None) -> bytes:
        return state_json(state, seat)

    def decode_state(self, data: bytes | str) -> GameState:
        return decode_state(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def determinize(self, state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
        return sampling.determinize(state, seat, rng, seed)

    def evaluate(self, state: GameState) -> list[float]:
        return sampling.evaluate(state)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> Outcome:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, Outcome]:
        return simulate(seed, bots, board or "base", make=self.make_bot)

    def components(self) -> dict[str, Any]:
        return hosting.components_json(self.boards)

    def board_geometry(self, board: str) -> BoardJson | None:
        return hosting.board_geometry(board, self.boards)

    def picture_svg(self, state: GameState, title: str = "") -> str:
        return board_svg(state, title)

    def clock(self, state: GameState) -> Clock | None:
        return platform_clock(state.clock)

    def seat_command_schema(self) -> dict[str, Any]:
        return hosting.seat_command_schema(super().seat_command_schema())

    def progress(self, state: GameState) -> str:
        return hosting.progress(state)

    def picture_text(self, state: GameState) -> str:
        return board_text(state)

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> Explanation:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> AuditReport:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return list(recorded.records())

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        return recorded.check_line(line)


GAME: Game[GameState, c.Command, e.Event] = RenatureGame()
"""The adapter the registry hosts (mypy checks it against the `Game` protocol)."""
