"""Renature behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any, get_args

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.core_adapter import CoreAdapter
from gameplatform.forms import inline_schema
from gameplatform.interface import Award, Clock, Game, Table, platform_clock
from renature import board as boards
from renature import commands as c
from renature import corpus as recorded
from renature import determinize as sampling
from renature import events as e
from renature.audit import audit
from renature.board import BoardJson, board_json, load_board
from renature.bots import BOT_NAMES, Bot, make_bot
from renature.clock import TimeControl
from renature.components import COLOURS, PLANT_TYPES, components, plant_colour, plant_type
from renature.explain import Explanation, explain
from renature.game import outcome, play, setup_commands
from renature.perspective import decode_state, encode_state, perspective
from renature.picture import board_svg
from renature.rules import RULES, legal_actions
from renature.state import GameState, Phase
from renature.view import GameView, view, visible_event

_corpus_decoder = msgspec.json.Decoder(recorded.CorpusGame)

SOURCES: dict[type[e.Event], str] = {
    e.GameStarted: "start",
    e.PlantPlaced: "plants",
    e.AreaScored: "areas",
    e.CloudsScored: "clouds",
    e.PlantsPenalised: "plants_left",
    e.TokensRevealed: "token_backs",
}
"""The source of the points of each scoring event (final area scorings: ``final_areas``)."""


def source_of(event: e.Event) -> str:
    if isinstance(event, e.AreaScored) and event.final:
        return "final_areas"
    return SOURCES.get(type(event), type(event).__name__)


def _cloud_action_variants(action: dict[str, Any], cell: dict[str, Any]) -> list[dict[str, Any]]:
    """One variant per kind of cloud action, each requiring what that kind names and
    refusing what it does not."""
    needs: dict[str, dict[str, Any]] = {
        "change_joker": {"animal": {"enum": list(components().animals)}},
        "extra_turn": {},
        "return_plant": {"cell": cell},
    }
    variants = []
    for kind in action["properties"]["kind"]["enum"]:
        variant = copy.deepcopy(action)
        variant["title"] = f"CloudAction ({kind})"
        variant["properties"]["kind"] = {"enum": [kind]}
        for field in ("animal", "cell"):  # what the kind does not name stays out (or null)
            variant["properties"][field] = needs[kind].get(field, {"type": "null"})
        variant["required"].extend(needs[kind])
        variants.append(variant)
    return variants


class RenatureOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a Renature game is created with beyond players and board: a turn clock
    (docs/rules.md, "Clocks"); none by default."""

    time_control: TimeControl | None = None

    def problem(self) -> str | None:
        return None if self.time_control is None else self.time_control.problem()


# long: the adapter forwards every member of the platform's Game protocol to the core
class RenatureGame(CoreAdapter):
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
    rules: Any = RULES
    hidden_information: bool = True
    seed_secret: bool = True
    state_type: Any = GameState
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
        control = (options or {}).get("time_control")
        clock = msgspec.UNSET if control is None else control
        return c.CreateGame(
            game_id=game_id, players=players, seed="", board=board or "base", clock=clock
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
        return e.public_command(command)  # type: ignore[arg-type]  # any command of the union

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def is_closed(self, state: GameState) -> bool:
        return state.phase in ("finished", "cancelled")

    def starts(self, event: e.Event) -> bool:
        return isinstance(event, e.GameStarted)

    def ends(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded)

    def closes(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded | e.GameCancelled)

    def to_move(self, state: GameState) -> int | None:
        if state.phase in ("lobby", "final_scoring", "finished", "cancelled"):
            return None
        return state.current

    def finishing_command(self, state: GameState, seed: str, salt: str = "") -> c.Command | None:
        return c.FinishGame(seed, salt) if state.phase == "final_scoring" else None

    def table(self, state: GameState) -> Table:
        return Table(
            game_id=state.game_id,
            version=state.version,
            board=state.board_id,
            players=state.players,
            phase=state.phase,
            to_move=self.to_move(state),
            current=state.current if state.current >= 0 else None,
            seed="chosen" if state.chosen_deal else "secret",
            names=[seat.name for seat in state.seats],
            colours=[COLOURS[seat.colour] for seat in state.seats],
            statuses=[seat.status for seat in state.seats],
            scores=[seat.score for seat in state.seats],
            ranking=list(state.result),
            winners=list(state.winners),
            over=state.is_over,
            started=state.phase != "lobby",
        )

    def points_awarded(self, event: e.Event) -> list[Award]:
        source = source_of(event)
        return [
            Award(seat, points, source, reason) for seat, points, reason in e.points_awarded(event)
        ]

    def view(self, state: GameState, seat: int | None) -> msgspec.Struct:
        return view(state, seat)

    def visible_event(self, event: e.Event, seat: int | None) -> e.Event:
        return visible_event(event, seat)

    def state_json(self, state: GameState, seat: int | None) -> bytes:
        return encode_state(perspective(state, -1 if seat is None else seat))

    def decode_state(self, data: bytes | str) -> GameState:
        return decode_state(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def determinize(self, state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
        return sampling.determinize(state, seat, rng, seed)

    def evaluate(self, state: GameState) -> list[float]:
        return search.margin_values(sampling.prospects(state), sampling.EVALUATION_SCALE)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> msgspec.Struct:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, msgspec.Struct]:
        log, state = play(len(bots), seed, bots, board=board or "base", make=self.make_bot)
        return log, state, outcome(state, bots, len(log))

    def components(self) -> dict[str, Any]:
        comps = components()
        return {
            "animals": list(comps.animals),
            "dominoes": [list(d) for d in comps.dominoes],
            "boards": {
                name: msgspec.to_builtins(boards.board_json(boards.load_board(name)))
                for name in self.boards
            },
        }

    def board_geometry(self, board: str) -> BoardJson | None:
        return board_json(load_board(board)) if board in self.boards else None

    def picture_svg(self, state: GameState, title: str = "") -> str:
        return board_svg(state, title)

    def clock(self, state: GameState) -> Clock | None:
        return platform_clock(state.clock)

    def seat_command_schema(self) -> dict[str, Any]:
        """The seat commands' schema with what the rules would otherwise refuse as naming
        nothing spelled out: the animals of the component data, and the ``animal`` or
        ``cell`` each kind of cloud action needs."""
        variants = []
        for variant in super().seat_command_schema()["anyOf"]:
            if variant["title"] == "CloudAction":
                variants.extend(_cloud_action_variants(variant, inline_schema(c.Cell)))
            else:
                variants.append(variant)
        return {"anyOf": variants}

    def progress(self, state: GameState) -> str:
        return f"turn {state.turn}, {state.phase}"

    def picture_text(self, state: GameState) -> str:
        """The board as plain text: ``~`` free path, area letters, an animal's first letter on a
        covered space, a plant's type letter (upper case for a colour, lower for neutral)."""
        board = state.board
        animals = components().animals
        lines = []
        for y in range(board.height):
            row = ""
            for x in range(board.width):
                cell = board.index(x, y)
                if board.kinds[cell] == boards.OFF:
                    row += " "
                elif state.plants[cell] >= 0:
                    code = state.plants[cell]
                    letter = PLANT_TYPES[plant_type(code)][0]
                    row += letter if COLOURS[plant_colour(code)] == "neutral" else letter.upper()
                elif state.area_of[cell] >= 0:
                    row += board.area_ids[state.area_of[cell]]
                elif state.cover[cell] >= 0:
                    row += animals[state.cover[cell]][0]
                else:
                    row += "~"
            lines.append(row.rstrip())
        return "\n".join(lines)

    def explain(self, events: Sequence[e.Event], seat: int | None = None) -> Explanation:
        return explain(events, seat)

    def audit(self, events: Sequence[e.Event]) -> AuditReport:
        return audit(events)

    def corpus(self) -> list[msgspec.Struct]:
        return [recorded.record(*game) for game in recorded.GAMES]

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        game = _corpus_decoder.decode(line)
        name = f"{game.board}, {game.players} players, {game.seed!r}"
        return name, recorded.check(game)


GAME: Game[GameState, c.Command, e.Event] = RenatureGame()
"""The adapter the registry hosts (mypy checks it against the `Game` protocol)."""
