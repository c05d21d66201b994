"""Renaissance behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from renaissance import commands as c
from renaissance import corpus as recorded
from renaissance import events as e
from renaissance.audit import audit
from renaissance.bots import BOT_NAMES, Bot, make_bot
from renaissance.components import components
from renaissance.errors import RuleError
from renaissance.explain import explain
from renaissance.game import outcome, play, setup_commands
from renaissance.picture import board_svg, board_text
from renaissance.rules import decide, evolve, execute, legal_actions
from renaissance.state import GameState
from renaissance.view import view

_corpus_decoder = msgspec.json.Decoder(recorded.CorpusGame)


def _options(options: dict[str, Any] | None) -> tuple[int, str]:
    options = options or {}
    return int(options.get("sets", 1)), str(options.get("competition", "points"))


class RenaissanceGame:
    name: str = "renaissance"
    title: str = "Renaissance (Masahiro Nakajima, 2012)"
    player_counts: tuple[int, ...] = (2,)
    boards: tuple[str, ...] = ("standard",)
    bot_names: tuple[str, ...] = BOT_NAMES
    command_type: Any = c.AnyCommand
    event_type: Any = e.AnyEvent
    hidden_information: bool = False

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

    def execute(
        self,
        state: GameState | None,
        command: c.Command,
        *,
        command_id: str | None = None,
        time: str | None = None,
    ) -> tuple[list[e.Event], GameState]:
        return execute(state, command, command_id=command_id, time=time)

    def decide(self, state: GameState | None, command: c.Command) -> list[e.Event]:
        return decide(state, command)

    def evolve(self, state: GameState | None, event: e.Event) -> GameState:
        return evolve(state, event)

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def is_rule_error(self, error: Exception) -> bool:
        return isinstance(error, RuleError)

    def is_over(self, state: GameState) -> bool:
        return state.is_over

    def to_move(self, state: GameState) -> int | None:
        return None if state.phase in ("lobby", "finished") else state.current

    def finishing_command(self, state: GameState, seed: str) -> c.Command | None:
        return None  # nothing is secret: the game ends with the last player's command

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def make_bot(self, name: str, seed: str) -> Bot:
        return make_bot(name, seed)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, msgspec.Struct]:
        sets, competition = _options(options)
        log, state = play(seed, bots, sets=sets, competition=competition)
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

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> msgspec.Struct:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> msgspec.Struct:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return [recorded.record(*game) for game in recorded.GAMES]

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        game = _corpus_decoder.decode(line)
        name = f"{'/'.join(game.bots)}, {game.sets} set(s), {game.seed!r}"
        return name, recorded.check(game)

    def encode_event(self, event: e.Event) -> bytes:
        return e.encode(event)

    def decode_event(self, data: bytes | str) -> e.Event:
        return e.decode(data)


GAME = RenaissanceGame()
