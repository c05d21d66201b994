"""What the platform asks of Renaissance beyond the rules: the creation options (sets,
competition, variant, clock) and the commands they make, seeds and salts in commands, what a
command's provenance shows, which events start, end and close a game, whose move it is, the
table every game reports, the points' sources, the state as a seat may hold it and the
components as data (``adapter.py`` forwards each)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import msgspec

from gameplatform.clock import TimeControl
from gameplatform.interface import Award, Table
from renaissance import commands as c
from renaissance import events as e
from renaissance.bots import Bot, make_bot
from renaissance.components import COLOURS, components
from renaissance.game import Outcome, outcome, play, setup_commands, with_salt
from renaissance.seating import variant_problem
from renaissance.state import GameState
from renaissance.view import masked_state

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


def create_command(game_id: str, players: int, options: dict[str, Any] | None) -> c.CreateGame:
    """The creation of a game with these options (the seed is the service's to draw)."""
    read = options_of(options)
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


def setup_with(
    game_id: str, seed: str, names: Sequence[str], options: dict[str, Any] | None
) -> list[c.Command]:
    """The creation, the joins and the start of a game with these options."""
    read = options_of(options)
    return setup_commands(game_id, seed, names, read.sets, read.competition, read.variant())


def simulate(
    seed: str,
    bots: Sequence[str],
    options: dict[str, Any] | None,
    make: Callable[[str, str], Bot] = make_bot,
) -> tuple[list[e.Event], GameState, Outcome]:
    """A whole game played by ``bots`` with these options: its events, last state, outcome."""
    read = options_of(options)
    log, state = play(
        seed, bots, sets=read.sets, competition=read.competition, variant=read.variant(), make=make
    )
    return log, state, outcome(state, bots, len(log))


def with_seed(command: c.Command, seed: str) -> c.Command:
    """A creation with the seed; a Janken hand sealed with the service's fresh random value
    as its salt (ruling 15: a frontend sends its hand only)."""
    if isinstance(command, c.CreateGame):
        return msgspec.structs.replace(command, seed=seed)
    return with_salt(command, seed)


def needs_seed(command: c.Command) -> bool:
    """A creation without a seed: the service draws one (a public one: nothing in
    Renaissance is dealt by chance, the seed only names the game). A Janken hand: the
    service draws its salt (whatever salt a client sent)."""
    if isinstance(command, c.ShowHand):
        return True
    return isinstance(command, c.CreateGame) and not command.seed


def public_command(command: c.Command) -> c.Command:
    """As sent, but a Janken hand: its provenance leaves the hand and the salt out (the
    events reveal both once both seats have shown)."""
    if isinstance(command, c.ShowHand):
        return msgspec.structs.replace(command, hand="", salt="")
    return command


def is_closed(state: GameState) -> bool:
    return state.phase in ("finished", "cancelled")


def starts(event: e.Event) -> bool:
    return isinstance(event, e.SetStarted) and event.set_number == 1


def ends(event: e.Event) -> bool:
    return isinstance(event, e.GameEnded)


def closes(event: e.Event) -> bool:
    return isinstance(event, e.GameEnded | e.GameCancelled)


def to_move(state: GameState) -> int | None:
    return None if state.phase in ("lobby", "finished", "cancelled") else state.current


def progress(state: GameState) -> str:
    return f"set {state.set_number}, {state.phase}"


def table(state: GameState, board: str) -> Table:
    return Table(
        game_id=state.game_id,
        version=state.version,
        board=board,
        players=len(state.names),
        phase=state.phase,
        to_move=to_move(state),
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


def points_awarded(event: e.Event) -> list[Award]:
    source = f"phase {event.phase}" if isinstance(event, e.PointsScored) else "points"
    return [Award(seat, points, source, reason) for seat, points, reason in e.points_awarded(event)]


def state_json(state: GameState, seat: int | None) -> bytes:
    """The state as ``seat`` may hold it (see ``view.masked_state``), encoded."""
    return msgspec.json.encode(masked_state(state, seat))


def decode_state(data: bytes | str) -> GameState:
    return _state_decoder.decode(data)


def components_json() -> dict[str, Any]:
    """The board, the markers, monominoes, pieces and hands, as data."""
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
