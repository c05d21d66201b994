"""Goofspiel behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Award, Clock, Game, Outcome, Table, platform_clock
from goofspiel import commands as c
from goofspiel import corpus as recorded
from goofspiel import events as e
from goofspiel import search_model
from goofspiel.audit import audit
from goofspiel.bots import BOT_NAMES, Bot, make_bot
from goofspiel.explain import Explanation, explain
from goofspiel.game import outcome, play, setup_commands
from goofspiel.picture import board_svg, board_text
from goofspiel.rules import RULES, legal_actions, public_command
from goofspiel.state import PHASES, GameState
from goofspiel.view import COLOURS, GameView, perspective, view, visible_event
from goofspiel.words import describe

_corpus_decoder = msgspec.json.Decoder(recorded.CorpusGame)
_state_decoder = msgspec.json.Decoder(GameState)


def options_of(options: dict[str, Any] | None) -> c.Options:
    """A game's options from JSON-like data: ``cards``, ``ties`` and ``time_control``; anything
    else, or a value out of range, raises ``msgspec.ValidationError`` naming it."""
    return msgspec.convert(options or {}, c.Options)


# long: the adapter forwards every member of the platform's Game protocol to the core
class GoofspielGame(CoreAdapter[GameState, c.Command, e.Event]):
    name: str = "goofspiel"
    title: str = "Goofspiel (the Game of Pure Strategy)"
    player_counts: tuple[int, ...] = (2,)
    boards: tuple[str, ...] = ("standard",)
    bot_names: tuple[str, ...] = (*BOT_NAMES, search.NAME)
    command_type: Any = c.AnyCommand
    seat_command_type: Any = c.SeatCommand
    create_type: Any = c.CreateGame
    join_type: Any = c.JoinGame
    start_type: Any = c.StartGame
    options_type: Any = c.Options
    """The options a creation takes (validated; unknown fields refused)."""
    phases: tuple[str, ...] = PHASES
    cancel_type: Any = c.CancelGame
    leave_type: Any = c.LeaveGame
    remove_type: Any = c.RemovePlayer
    resign_type: Any = c.Resign
    """A resignation loses (rulings, 8); the lobby's seats come and go (rulings, 9)."""
    timeout_type: Any = c.ClaimTimeout
    """A time control's timeout (rulings, 10 and 11): a bot bids on for the seat, or it loses."""
    reclaim_type: Any = c.ReclaimSeat
    """A seat a bot plays since its timeout taken back by its player (rulings, 12)."""
    event_type: Any = e.AnyEvent
    rules = RULES
    hidden_information: bool = True
    seed_secret: bool = True
    state_type: Any = GameState
    view_type: Any = GameView
    audit_type: Any = AuditReport
    explanation_type: Any = Explanation
    search_budget: search.Budget = search_model.BUDGET

    def setup_commands(
        self,
        game_id: str,
        seed: str,
        players: int,
        names: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[c.Command]:
        return setup_commands(game_id, seed, names, options_of(options))

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> c.Command:
        chosen = options_of(options)
        control = chosen.time_control
        return c.CreateGame(
            game_id=game_id,
            seed="",
            players=players,
            cards=chosen.cards,
            ties=chosen.ties,
            clock=msgspec.UNSET if control is None else control,
        )

    def with_seed(
        self, command: c.Command, seed: str, salt: str = "", chosen: bool = False
    ) -> c.Command:
        if isinstance(command, c.CreateGame):
            return msgspec.structs.replace(command, seed=seed, salt=salt, chosen_seed=chosen)
        if isinstance(command, c.FinishGame):
            return c.FinishGame(seed=seed, salt=salt)
        return command

    def needs_seed(self, command: c.Command) -> bool:
        return isinstance(command, c.CreateGame | c.FinishGame)

    def public_command(self, command: c.Command) -> c.Command:
        return public_command(command)

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def ends(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded)

    def closes(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded | e.GameCancelled)

    def is_closed(self, state: GameState) -> bool:
        return state.is_closed

    def starts(self, event: e.Event) -> bool:
        return isinstance(event, e.GameStarted)

    def clock(self, state: GameState) -> Clock | None:
        return platform_clock(state.clock)

    def progress(self, state: GameState) -> str:
        return f"{state.phase}, version {state.version}"

    def to_move(self, state: GameState) -> int | None:
        return state.to_move

    def finishing_command(self, state: GameState, seed: str, salt: str = "") -> c.Command | None:
        return c.FinishGame(seed=seed, salt=salt) if state.phase == "final_scoring" else None

    def table(self, state: GameState) -> Table:
        return Table(
            game_id=state.game_id,
            version=state.version,
            board=self.boards[0],
            players=2,
            phase=state.phase,
            to_move=state.to_move,
            current=state.to_move,
            seed="chosen" if state.chosen_seed else "secret",
            names=list(state.names),
            colours=list(COLOURS),
            statuses=list(state.statuses),
            scores=list(state.scores),
            ranking=list(state.ranking),
            winners=list(state.winners),
            over=state.is_over,
            started=state.phase != "lobby",
        )

    def points_awarded(self, event: e.Event) -> list[Award]:
        return [
            Award(seat, points, "prizes", reason)
            for seat, points, reason in e.points_awarded(event)
        ]

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def visible_event(self, event: e.Event, seat: int | None) -> e.Event:
        return visible_event(event, seat)

    def state_json(self, state: GameState, seat: int | None) -> bytes:
        return msgspec.json.encode(perspective(state, seat))

    def decode_state(self, data: bytes | str) -> GameState:
        return _state_decoder.decode(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def determinize(self, state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
        return search_model.determinize(state, seat, rng, seed)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> Outcome:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, Outcome]:
        log, state = play(seed, bots, options_of(options), make=self.make_bot)
        return log, state, outcome(state, bots, len(log))

    def components(self) -> dict[str, Any]:
        return {
            "suits": {"seats": list(COLOURS), "prizes": "diamonds"},
            "cards": list(range(1, c.MAX_CARDS + 1)),
            "options": msgspec.json.schema(c.Options),
        }

    def picture_svg(self, state: GameState, title: str = "") -> str:
        return board_svg(state, title)

    def picture_text(self, state: GameState) -> str:
        return board_text(state)

    def describe(self, item: Any, seats: Sequence[str]) -> str:
        return describe(item, seats)

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> Explanation:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> AuditReport:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return [recorded.record(*game) for game in recorded.GAMES]

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        game = _corpus_decoder.decode(line)
        name = f"{'/'.join(game.bots)}, {game.cards} cards, ties {game.ties}, {game.seed!r}"
        return name, recorded.check(game)


GAME: Game[GameState, c.Command, e.Event] = GoofspielGame()
"""The adapter the registry hosts (mypy checks it against the `Game` protocol)."""
