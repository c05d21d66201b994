"""Renaissance behind the platform interface: a thin adapter, every call the core's own."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Annotated, Any, Literal, get_args

import msgspec

from gameplatform import search
from gameplatform.audit import AuditReport
from gameplatform.clock import TimeControl
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Award, Clock, Game, Table, platform_clock
from gameplatform.sealed import SealedChoice
from renaissance import commands as c
from renaissance import corpus as recorded
from renaissance import events as e
from renaissance import search_model
from renaissance.audit import audit
from renaissance.bots import BOT_NAMES, Bot, make_bot
from renaissance.components import COLOURS, components
from renaissance.explain import Explanation, explain
from renaissance.game import outcome, play, setup_commands, with_salt
from renaissance.picture import board_svg, board_text
from renaissance.rules import JANKEN_HANDS, RULES, legal_actions, variant_problem
from renaissance.state import GameState, Phase
from renaissance.view import GameView, masked_state, view, visible_event
from renaissance.words import describe

_corpus_decoder = msgspec.json.Decoder(recorded.CorpusGame)
_state_decoder = msgspec.json.Decoder(GameState)


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A Renaissance game's creation options: how many ``sets`` are played, the
    ``competition`` rule that names the winner (by total ``points`` or by ``sets`` won), the
    variant the players agree on (``docs/rules-renaissance.md``, rulings 12 to 16) and a turn
    clock (ruling 18)."""

    sets: Annotated[int, msgspec.Meta(ge=1, le=16)] = 1
    competition: Literal["points", "sets"] = "points"
    play: c.Play = "both"
    extra_hands: list[c.ExtraHand] = []
    distribution: c.Distribution | None = None
    phase2_agreement: bool = False
    time_control: TimeControl | None = None
    """A turn clock (ruling 18): a seat whose time runs out loses (``on_timeout``: remove)."""

    def __post_init__(self) -> None:
        variant = self.variant()
        if variant is not None and (problem := variant_problem(variant)):
            raise ValueError(problem)  # msgspec reports it as a ValidationError

    def problem(self) -> str | None:
        control = self.time_control
        if control is None:
            return None
        if control.on_timeout != "remove":
            return "a seat whose time runs out loses a Renaissance game: on_timeout is remove."
        return control.problem()

    def variant(self) -> c.Variant | None:
        """The variant (None: the standard rules, recorded as before)."""
        variant = c.Variant(self.play, self.extra_hands, self.distribution, self.phase2_agreement)
        return None if variant == c.Variant() else variant


def options_of(options: dict[str, Any] | None) -> Options:
    """The options as a game takes them; raises ``msgspec.ValidationError`` (a ``ValueError``)
    naming an unknown or wrong option, or options that do not go together."""
    return msgspec.convert(options or {}, Options)


def create_command(game_id: str, players: int, read: Options) -> c.CreateGame:
    """The creation of a game with ``read`` options (the seed is the service's to draw)."""
    variant = read.variant()
    control = read.time_control
    return c.CreateGame(
        game_id=game_id,
        seed="",
        players=players,
        sets=read.sets,
        competition=read.competition,
        clock=msgspec.UNSET if control is None else control,
        variant=msgspec.UNSET if variant is None else variant,
    )


# long: the adapter forwards every member of the platform's Game protocol to the core
class RenaissanceGame(CoreAdapter):
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
    rules: Any = RULES
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
        read = options_of(options)
        return setup_commands(game_id, seed, names, read.sets, read.competition, read.variant())

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> c.Command:
        return create_command(game_id, players, options_of(options))

    def with_seed(
        self, command: c.Command, seed: str, salt: str = "", chosen: bool = False
    ) -> c.Command:
        """A creation with the seed; a Janken hand sealed with the service's fresh random value
        as its salt (ruling 15: a frontend sends its hand only)."""
        if isinstance(command, c.CreateGame):
            return msgspec.structs.replace(command, seed=seed)
        return with_salt(command, seed)

    def needs_seed(self, command: c.Command) -> bool:
        """A creation without a seed: the service draws one (a public one: nothing in
        Renaissance is dealt by chance, the seed only names the game). A Janken hand: the
        service draws its salt (whatever salt a client sent)."""
        if isinstance(command, c.ShowHand):
            return True
        return isinstance(command, c.CreateGame) and not command.seed

    def public_command(self, command: c.Command) -> c.Command:
        """As sent, but a Janken hand: its provenance leaves the hand and the salt out (the
        events reveal both once both seats have shown)."""
        if isinstance(command, c.ShowHand):
            return msgspec.structs.replace(command, hand="", salt="")
        return command

    def legal_actions(self, state: GameState, seat: int) -> list[c.Command]:
        return legal_actions(state, seat)

    def is_closed(self, state: GameState) -> bool:
        return state.phase in ("finished", "cancelled")

    def starts(self, event: e.Event) -> bool:
        return isinstance(event, e.SetStarted) and event.set_number == 1

    def ends(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded)

    def closes(self, event: e.Event) -> bool:
        return isinstance(event, e.GameEnded | e.GameCancelled)

    def to_move(self, state: GameState) -> int | None:
        return None if state.phase in ("lobby", "finished", "cancelled") else state.current

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
            statuses=[
                state.out_status if seat == state.resigned else "playing"
                for seat in range(len(state.names))
            ],
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
        return msgspec.json.encode(masked_state(state, seat))  # see ``view``

    def decode_state(self, data: bytes | str) -> GameState:
        return _state_decoder.decode(data)

    def make_bot(self, name: str, seed: str) -> Bot:
        if name == search.NAME:
            return search.SearchBot(self, seed, self.search_budget)
        return make_bot(name, seed)

    def determinize(self, state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
        """The state itself, but for a Janken under way: another seat's sealed hand (blanked in
        ``seat``'s perspective) is a hand drawn at random, sealed under ``seed``."""
        janken = state.janken
        if janken is None or janken.is_complete:
            return state
        for other, slot in enumerate(janken.slots):
            if other != seat and slot.is_sealed:
                janken = janken.put(other, SealedChoice.of(rng.choice(JANKEN_HANDS), seed))
        return msgspec.structs.replace(state, janken=janken)

    def evaluate(self, state: GameState) -> list[float]:
        return search_model.evaluate(state)

    def outcome(self, state: GameState, bots: Sequence[str], events: int) -> msgspec.Struct:
        return outcome(state, bots, events)

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[e.Event], GameState, msgspec.Struct]:
        read = options_of(options)
        log, state = play(
            seed,
            bots,
            sets=read.sets,
            competition=read.competition,
            variant=read.variant(),
            make=self.make_bot,
        )
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

    def clock(self, state: GameState) -> Clock | None:
        return platform_clock(state.clock)

    def progress(self, state: GameState) -> str:
        return f"set {state.set_number}, {state.phase}"

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
        name = f"{'/'.join(game.bots)}, {game.sets} set(s), {game.seed!r}"
        return name, recorded.check(game)


GAME: Game[GameState, c.Command, e.Event] = RenaissanceGame()
"""The adapter the registry hosts (mypy checks it against the `Game` protocol)."""
