"""The interface a game implements for the platform: a small typed Protocol.

The shape follows OpenSpiel and boardgame.io (see the house style): the game describes its
rules as pure functions over immutable values, and data; the platform owns every side effect.
``State``, ``Command`` and ``Event`` are the game's own types (msgspec structs); the platform
moves them as values and as JSON (``command_type``/``event_type`` decode them).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

import msgspec

from gameplatform import chain
from gameplatform.audit import AuditReport
from gameplatform.clock import ClockState, deadline_ms
from gameplatform.execution import Versioned
from gameplatform.explanation import Explanation

JsonValue = Any
"""A value as JSON reads it (null, a boolean, a number, a string, a list or an object of them)
whose shape only its reader knows: a request's body, a schema, a game's components. Typed
`Any` on purpose; a value of a known shape is a msgspec struct instead."""

HostedState = Versioned
"""What the platform reads of every game's state itself (a frozen msgspec struct): which game it
is, the version of the last event folded in and that event's chain hash. The rest of a state is
the game's own, read through the `Game` protocol."""

State = TypeVar("State", bound=HostedState)
Command = TypeVar("Command", bound=msgspec.Struct)
Event = TypeVar("Event", bound=chain.Event)
Seen = TypeVar("Seen", contravariant=True)
Chosen = TypeVar("Chosen", covariant=True)


class Bot(Protocol[Seen, Chosen]):
    def choose(self, state: Seen, seat: int) -> Chosen: ...


@runtime_checkable
class Describes(Protocol):
    """What a game may add to say its commands and events in its players' words (the web
    client lists the moves and the log with them); a game without it is described in plain
    words read from its structs (``gameplatform.words``)."""

    def describe(self, item: Any, seats: Sequence[str]) -> str:
        """A command or an event (as the reader may see it) in words; ``seats`` names each
        seat, e.g. by its colour."""
        ...


class Outcome(Protocol):
    """The result of a whole game as ``simulate`` reports it (a msgspec struct: the platform's
    `simulation.Outcome` with the game's id and whatever else the game adds)."""

    @property
    def game_id(self) -> str: ...

    @property
    def players(self) -> int: ...

    @property
    def bots(self) -> list[str]: ...

    @property
    def scores(self) -> list[int]: ...

    @property
    def ranking(self) -> list[int]: ...

    @property
    def winners(self) -> list[int]: ...

    @property
    def colours(self) -> list[str]: ...

    @property
    def events(self) -> int: ...


class Table(msgspec.Struct, frozen=True):
    """The facts every service reads of any game's state, whatever the game: who sits where,
    whose turn it is, the scores so far and the result."""

    game_id: str
    version: int
    board: str
    """The board (or set-up) the game is played on, one of the game's ``boards``."""
    players: int
    phase: str
    to_move: int | None
    """The seat the game waits for (None: nobody's, e.g. the lobby or the service's finish)."""
    current: int | None
    """The seat whose turn it is, as the game shows it (Renature keeps it while the service
    scores the end, where ``to_move`` is None); None before the first turn and once over."""
    seed: str
    """Where the deal comes from: ``secret`` (a random seed revealed at the end), ``chosen``
    (a caller chose it, so it knows every hand) or ``public`` (the seed deals nothing hidden)."""
    names: list[str | None]
    """Each seat's player name, None while the seat is open."""
    colours: list[str]
    """Each seat's colour as the game names it."""
    statuses: list[str]
    """Each seat's standing: ``playing``, or how it stopped playing (Renature: ``bot``,
    ``resigned``, ``removed``). ``bot``: a bot plays the seat since its time ran out; its
    player takes it back with ``reclaim_command`` (the gateway sends it before any command of
    theirs)."""
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    over: bool
    started: bool
    """Whether the game left its lobby (seats can no longer be taken)."""


class Clock(msgspec.Struct, frozen=True):
    """A game's turn clock as the platform reads it (the clock service, the lobby): its time
    control (``per_turn`` seconds, or a ``total`` per seat plus an ``increment`` per turn;
    ``on_timeout``: ``bot`` or ``remove``), the seat whose time runs (``running_for``, None when
    none does) since ``turn_started_ms``, when it runs out (``deadline_ms``), and each seat's
    bank as of the start of the running turn (``remaining_ms``, total mode). Times are ms since
    the epoch, folded from the times the service recorded (the core reads no clock)."""

    per_turn: int | None
    total: int | None
    increment: int
    on_timeout: str
    running_for: int | None
    turn_started_ms: int | None
    deadline_ms: int | None
    remaining_ms: list[int]


def platform_clock(clock: ClockState | None) -> Clock | None:
    """A game's folded `ClockState` as the platform reads it (None: no clock)."""
    if clock is None:
        return None
    return Clock(
        **msgspec.structs.asdict(clock.control),  # per_turn, total, increment, on_timeout
        running_for=clock.owner if clock.owner >= 0 else None,
        turn_started_ms=clock.turn_started_ms,
        deadline_ms=deadline_ms(clock),
        remaining_ms=list(clock.remaining_ms),
    )


class Award(msgspec.Struct, frozen=True):
    """Points an event gives one seat: ``source`` groups them (a breakdown), ``reason`` says why
    in a player's words. The scores of a game are the sums of its awards."""

    seat: int
    points: int
    source: str
    reason: str


# long: the protocol lists, documented, every member a game hands the platform
class Game(Protocol[State, Command, Event]):
    """Everything the platform needs of a game, and nothing more."""

    name: str
    """The registry key and the ``--game`` value: ``renature``, ``renaissance``."""
    title: str
    player_counts: tuple[int, ...]
    phases: tuple[str, ...]
    """Every phase ``Table.phase`` may name (a lobby listing filters by them)."""
    boards: tuple[str, ...]
    """Board (or set-up) names a game can be created on; the first is the default."""
    bot_names: tuple[str, ...]
    command_type: Any
    """The union of every command: ``msgspec.json.Decoder(command_type)`` reads one."""
    seat_command_type: Any
    """The union of the commands a seated player sends (moves, not set-up commands)."""
    event_type: Any
    """The union of every event."""
    hidden_information: bool
    """Whether views differ by seat (Renature: hands and tokens; Renaissance: nothing)."""
    seed_secret: bool
    """Whether the seed deals what players may not see, so that the service keeps it in its
    vault and reveals it only at the end (Renature); otherwise it is public (Renaissance)."""
    state_type: Any
    """The state's type (for clients that decode ``state_json``)."""
    state_unencoded: tuple[str, ...]
    """Fields of ``state_type`` held in Python but never sent (Renature's static board, loaded
    by its id): an API's document leaves them out of the state's schema."""
    view_type: Any
    """The type ``view`` returns; ``audit_type`` and ``explanation_type`` likewise: what an
    API's document says a game's answers are."""
    audit_type: Any
    explanation_type: Any
    options_type: Any
    """What a creation takes beyond players and board (Renature: a time control; Renaissance:
    sets and the competition rule): a msgspec struct with ``forbid_unknown_fields`` whose fields
    all have defaults, and which may have a ``problem() -> str | None`` method for what its
    types cannot say. `gameplatform.creation` reads and checks it; ``options`` arguments below
    are its fields as a dict (`creation.options_dict`)."""

    # --- create and deal from a seed ---------------------------------------------------------
    def setup_commands(
        self,
        game_id: str,
        seed: str,
        players: int,
        names: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[Command]:
        """Create the game (the seed is the only randomness), seat every player, start it."""
        ...

    def create_command(
        self,
        game_id: str,
        players: int,
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Command:
        """The creation command as a server issues it: the seed blank (the service fills it)."""
        ...

    def join_command(self, seat: int, name: str) -> Command: ...

    def start_command(self) -> Command: ...

    # --- seats: the commands the platform sends for every game (None: not offered) ---------
    def cancel_command(self) -> Command | None:
        """The host calls the game off before the start."""
        ...

    def leave_command(self, seat: int) -> Command | None:
        """The seat's player leaves the lobby (before the start)."""
        ...

    def remove_command(self, seat: int) -> Command | None:
        """The host frees a seat of the lobby (before the start)."""
        ...

    def resign_command(self, seat: int) -> Command | None:
        """The seat's player gives up a started game (what that does is the game's rule)."""
        ...

    def timeout_command(self, seat: int) -> Command | None:
        """The clock service's claim that ``seat`` ran out of time (the core checks it)."""
        ...

    def reclaim_command(self, seat: int) -> Command | None:
        """The seat's player takes back a seat a bot plays since its time ran out."""
        ...

    def with_seed(
        self, command: Command, seed: str, salt: str = "", chosen: bool = False
    ) -> Command:
        """A creation (or a finish) with the seed the service holds for the game."""
        ...

    # --- commands as the services see them ----------------------------------------------------
    def is_creation(self, command: Command) -> bool: ...

    def needs_seat(self, command: Command) -> bool:
        """Whether only a seated player may send it (a move, not a set-up command)."""
        ...

    def sender_of(self, command: Command) -> str:
        """The service that alone may send it: ``clock`` (a claim that a seat's time ran out)
        or ``gateway`` (everything else); the rules service refuses it from any other."""
        ...

    def needs_seed(self, command: Command) -> bool:
        """Whether the service must put the game's seed into it (creation, a finish)."""
        ...

    def public_command(self, command: Command) -> Command:
        """The command as recorded in provenance: secrets (a seed) left out."""
        ...

    def decode_command(self, data: bytes | str) -> Command: ...

    def seat_command_schema(self) -> dict[str, Any]:
        """The JSON schema of a seated player's command as a client sends it (``anyOf`` its
        variants, inlined; ``seat`` optional), with what the rules would otherwise refuse as
        naming nothing spelled out (`gameplatform.forms.CommandForms` gives the plain one)."""
        ...

    def seat_command(self, payload: dict[str, Any]) -> Command:
        """A player's command from JSON-like data (raises ``msgspec.ValidationError``)."""
        ...

    # --- the rules ---------------------------------------------------------------------------
    def execute(
        self,
        state: State | None,
        command: Command,
        *,
        command_id: str | None = None,
        time: str | None = None,
    ) -> tuple[list[Event], State]:
        """``decide`` and the state after its events (raises the game's rule errors)."""
        ...

    def decide(self, state: State | None, command: Command) -> list[Event]: ...

    def evolve(self, state: State | None, event: Event) -> State: ...

    def replay(self, events: Sequence[Event]) -> State | None:
        """The state after ``events`` (a fold of ``evolve``; None for no events)."""
        ...

    def legal_actions(self, state: State, seat: int) -> list[Command]: ...

    def is_rule_error(self, error: Exception) -> bool: ...

    def is_over(self, state: State) -> bool: ...

    def is_closed(self, state: State) -> bool:
        """Whether nothing more is appended to the game: over, or called off (what `closes`
        says of the last event)."""
        ...

    def starts(self, event: Event) -> bool:
        """Whether ``event`` starts the game (it leaves its lobby: seats can no longer be
        taken)."""
        ...

    def ends(self, event: Event) -> bool:
        """Whether ``event`` ends the game with its result (after it nothing is appended)."""
        ...

    def closes(self, event: Event) -> bool:
        """Whether nothing is appended after ``event``: the end, or a game called off before
        it had a result (Renature's cancellation)."""
        ...

    def to_move(self, state: State) -> int | None:
        """The seat whose command the game waits for (None: nobody's, e.g. the service's)."""
        ...

    def clock(self, state: State) -> Clock | None:
        """The game's clock (None: created without a time control, or a game without clocks);
        when its deadline has passed, the service sends ``timeout_command(running_for)``."""
        ...

    def finishing_command(self, state: State, seed: str, salt: str = "") -> Command | None:
        """A command the service itself owes the game now (Renature: the seed reveal once the
        last domino is gone), given the game's seed; None when it owes none."""
        ...

    def table(self, state: State) -> Table: ...

    def points_awarded(self, event: Event) -> list[Award]: ...

    def view(self, state: State, seat: int | None) -> msgspec.Struct:
        """What ``seat`` (None: a spectator) may see."""
        ...

    def visible_event(self, event: Event, seat: int | None) -> Event:
        """The event as ``seat`` may see it (secrets blanked, never dropped; no hash chain)."""
        ...

    def state_json(self, state: State, seat: int | None) -> bytes:
        """The whole state as ``seat`` may see it, as JSON (bots of a client fold or read it)."""
        ...

    def decode_state(self, data: bytes | str) -> State: ...

    # --- bots, simulation --------------------------------------------------------------------
    def make_bot(self, name: str, seed: str) -> Bot[State, Command]: ...

    def determinize(self, state: State, seat: int, rng: random.Random, seed: str) -> State:
        """A state ``seat`` cannot tell from ``state``, the hidden rest drawn from ``rng`` and
        committed to ``seed`` (for ``finishing_command``): the search bot's sample."""
        ...

    def evaluate(self, state: State) -> list[float]:
        """Each seat's prospects in [0, 1] in an unfinished game: the search bot's heuristic."""
        ...

    def bot_seed(self, seed: str, seat: int) -> str:
        """The seed of ``seat``'s bot in a game dealt from ``seed`` (as ``simulate`` seeds it)."""
        ...

    def outcome(self, state: State, bots: Sequence[str], events: int) -> Outcome:
        """The outcome of a finished game as ``simulate`` reports it."""
        ...

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[Event], State, Outcome]:
        """A whole bot game in process: its events, final state and outcome."""
        ...

    # --- data, pictures, explanation, audit, corpus -------------------------------------------
    def components(self) -> dict[str, JsonValue]:
        """The game's boards and pieces as plain data (JSON-able)."""
        ...

    def board_geometry(self, board: str) -> msgspec.Struct | None:
        """What a client needs to draw ``board`` (a msgspec struct: cells, areas, ...); None for
        a game whose board is drawn from its picture alone."""
        ...

    def picture_svg(self, state: State, title: str = "") -> str: ...

    def picture_text(self, state: State) -> str: ...

    def progress(self, state: State) -> str:
        """Where the game stands in its own words (``turn 12, place_domino``), for a replay."""
        ...

    def explain(self, events: Sequence[Event], seat: int | None = None) -> Explanation:
        """The platform's explanation (`gameplatform.explanation`), the game's own subclass."""
        ...

    def audit(self, events: Sequence[Event]) -> AuditReport:
        """The platform's report (`gameplatform.audit`), the same shape for every game."""
        ...

    def corpus(self) -> list[msgspec.Struct]:
        """The game's corpus of recorded games, recorded now."""
        ...

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        """(name, differences) of one corpus line replayed; raises msgspec errors for junk."""
        ...

    def encode_event(self, event: Event) -> bytes: ...

    def decode_event(self, data: bytes | str) -> Event: ...


HostedGame = Game[HostedState, msgspec.Struct, chain.Event]
"""Any hosted game, as the services hold one they looked up by name: its states, commands and
events seen through the platform's bases (`HostedState`, a msgspec struct, `chain.Event`). Each
value handed to one of its members must come from the same game (a stream names its game once,
in the meta of its first event, and every reader decodes the stream with that game)."""
