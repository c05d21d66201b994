"""Renaissance behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Award, Table
from renaissance import commands as c
from renaissance import corpus as recorded
from renaissance import events as e
from renaissance.audit import audit
from renaissance.bots import BOT_NAMES, EVALUATION_SCALE, Bot, make_bot, prospects
from renaissance.components import COLOURS, components
from renaissance.explain import Explanation, explain
from renaissance.game import outcome, play, setup_commands
from renaissance.picture import board_svg, board_text
from renaissance.rules import RULES, legal_actions
from renaissance.state import GameState
from renaissance.view import GameView, view, visible_event

_corpus_decoder = msgspec.json.Decoder(recorded.CorpusGame)
_state_decoder = msgspec.json.Decoder(GameState)


def _options(options: dict[str, Any] | None) -> tuple[int, str]:
    options = options or {}
    return int(options.get("sets", 1)), str(options.get("competition", "points"))


class RenaissanceGame(CoreAdapter):
    name: str = "renaissance"
    title: str = "Renaissance (Masahiro Nakajima, 2012)"
    player_counts: tuple[int, ...] = (2,)
    boards: tuple[str, ...] = ("standard",)
    bot_names: tuple[str, ...] = (*BOT_NAMES, search.NAME)
    search_budget: search.Budget = search.Budget(
        iterations=200, rollout_depth=0, rollout_policy="random", widening=100.0
    )
    """A move of the greedy bot costs milliseconds here (it plays every action out), too much
    for rollouts: the search values each new node by the heuristic alone and looks wider and
    deeper instead."""
    command_type: Any = c.AnyCommand
    seat_command_type: Any = c.SeatCommand
    create_type: Any = c.CreateGame
    join_type: Any = c.JoinGame
    start_type: Any = c.StartGame
    event_type: Any = e.AnyEvent
    rules: Any = RULES
    hidden_information: bool = False
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
        sets, competition = _options(options)
        return setup_commands(game_id, seed, names, sets, competition)

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> c.Command:
        sets, competition = _options(options)
        return c.CreateGame(
            game_id=game_id,
            seed="",
            players=players,
            sets=sets,
            competition="sets" if competition == "sets" else "points",
        )

    def with_seed(
        self, command: c.Command, seed: str, salt: str = "", chosen: bool = False
    ) -> c.Command:
        if isinstance(command, c.CreateGame):
            return msgspec.structs.replace(command, seed=seed)
        return command

    def needs_seed(self, command: c.Command) -> bool:
        """Only a creation without a seed: the service draws one (a public one: nothing in
        Renaissance is dealt by chance, the seed only names the game)."""
        return isinstance(command, c.CreateGame) and not command.seed

    def public_command(self, command: c.Command) -> c.Command:
        return command

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def ends(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded)

    def closes(self, event: e.Event) -> bool:
        return self.ends(event)  # a Renaissance game is never called off

    def to_move(self, state: GameState) -> int | None:
        return None if state.phase in ("lobby", "finished") else state.current

    def finishing_command(self, state: GameState, seed: str, salt: str = "") -> c.Command | None:
        return None  # nothing is secret: the game ends with the last player's command

    def table(self, state: GameState) -> Table:
        return Table(
            game_id=state.game_id,
            version=state.version,
            board=self.boards[0],
            players=len(state.names),
            phase=state.phase,
            to_move=self.to_move(state),
            current=state.current if state.current >= 0 else None,
            seed="public",
            names=list(state.names),
            colours=[COLOURS[state.colour_of(seat)] for seat in range(len(state.names))],
            statuses=["playing"] * len(state.names),
            scores=list(state.scores),
            ranking=list(state.ranking),
            winners=list(state.winners),
            over=state.is_over,
            started=state.phase != "lobby",
        )

    def points_awarded(self, event: e.Event) -> list[Award]:
        source = f"phase {event.phase}" if isinstance(event, e.PointsScored) else "points"
        return [
            Award(seat, points, source, reason) for seat, points, reason in e.points_awarded(event)
        ]

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def visible_event(self, event: e.Event, seat: int | None) -> e.Event:
        return visible_event(event, seat)

    def state_json(self, state: GameState, seat: int | None) -> bytes:
        return msgspec.json.encode(state)  # nothing is hidden (see ``view``)

    def decode_state(self, data: bytes | str) -> GameState:
        return _state_decoder.decode(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def evaluate(self, state: GameState) -> list[float]:
        return search.margin_values(prospects(state), EVALUATION_SCALE)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> msgspec.Struct:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, msgspec.Struct]:
        sets, competition = _options(options)
        log, state = play(seed, bots, sets=sets, competition=competition, make=self.make_bot)
        return log, state, outcome(state, bots, len(log))

    def components(self) -> dict[str, Any]:
        comps = components()
        return {
            "board": {"width": comps.width, "height": comps.height, "blocked": comps.blocked},
            "markers": comps.markers,
            "monominoes": comps.monominoes,
            "pieces": [
                {"id": p.id, "shape": [list(cell) for cell in p.shape], "tags": list(p.tags)}
                for p in comps.pieces
            ],
            "hands": [
                {"name": h.name, "needs": dict(h.needs), "points": h.points, "per": h.per_piece}
                for h in comps.hands
            ],
        }

    def picture_svg(self, state: GameState, title: str = "") -> str:
        return board_svg(state, title)

    def picture_text(self, state: GameState) -> str:
        return board_text(state)

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> Explanation:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> AuditReport:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return [recorded.record(*game) for game in recorded.GAMES]

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        game = _corpus_decoder.decode(line)
        name = f"{'/'.join(game.bots)}, {game.sets} set(s), {game.seed!r}"
        return name, recorded.check(game)


GAME = RenaissanceGame()
