"""The interface a game implements for the platform: a small typed Protocol.

The shape follows OpenSpiel and boardgame.io (see the house style): the game describes its
rules as pure functions over immutable values, and data; the platform owns every side effect.
``State``, ``Command`` and ``Event`` are the game's own types (msgspec structs); the platform
moves them as values and as JSON (``command_type``/``event_type`` decode them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import msgspec

State = TypeVar("State")
Command = TypeVar("Command")
Event = TypeVar("Event")
Seen = TypeVar("Seen", contravariant=True)
Chosen = TypeVar("Chosen", covariant=True)


class Bot(Protocol[Seen, Chosen]):
    def choose(self, state: Seen, seat: int) -> Chosen: ...


class Outcome(Protocol):
    """The result of a whole game as ``simulate`` reports it (a msgspec struct)."""

    game_id: str
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    events: int


class Game(Protocol[State, Command, Event]):
    """Everything the platform needs of a game, and nothing more."""

    name: str
    """The registry key and the ``--game`` value: ``renature``, ``renaissance``."""
    title: str
    player_counts: tuple[int, ...]
    boards: tuple[str, ...]
    """Board (or set-up) names a game can be created on; the first is the default."""
    bot_names: tuple[str, ...]
    command_type: Any
    """The union of every command: ``msgspec.json.Decoder(command_type)`` reads one."""
    event_type: Any
    """The union of every event."""
    hidden_information: bool
    """Whether views differ by seat (Renature: hands and tokens; Renaissance: nothing)."""

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

    def legal_actions(self, state: State, seat: int) -> list[Command]: ...

    def is_rule_error(self, error: Exception) -> bool: ...

    def is_over(self, state: State) -> bool: ...

    def to_move(self, state: State) -> int | None:
        """The seat whose command the game waits for (None: nobody's, e.g. the service's)."""
        ...

    def finishing_command(self, state: State, seed: str) -> Command | None:
        """A command the service itself owes the game now (Renature: the seed reveal once the
        last domino is gone), given the game's seed; None when it owes none."""
        ...

    def view(self, state: State, seat: int | None) -> msgspec.Struct:
        """What ``seat`` (None: a spectator) may see."""
        ...

    # --- bots, simulation --------------------------------------------------------------------
    def make_bot(self, name: str, seed: str) -> Bot[State, Command]: ...

    def simulate(
        self,
        seed: str,
        bots: Sequence[str],
        board: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[Event], State, msgspec.Struct]:
        """A whole bot game in process: its events, final state and outcome."""
        ...

    # --- data, pictures, explanation, audit, corpus -------------------------------------------
    def components(self) -> dict[str, Any]:
        """The game's boards and pieces as plain data (JSON-able)."""
        ...

    def picture_svg(self, state: State, title: str = "") -> str: ...

    def picture_text(self, state: State) -> str: ...

    def explain(self, events: Sequence[Event], seat: int | None = None) -> msgspec.Struct: ...

    def audit(self, events: Sequence[Event]) -> msgspec.Struct:
        """A report with at least ``ok``, ``game_id``, ``events``, ``batches``, ``finished``,
        ``checks``, ``first_bad``, ``findings``, ``scores``, ``winners``."""
        ...

    def corpus(self) -> list[msgspec.Struct]:
        """The game's corpus of recorded games, recorded now."""
        ...

    def check_corpus_game(self, line: bytes) -> tuple[str, list[str]]:
        """(name, differences) of one corpus line replayed; raises msgspec errors for junk."""
        ...

    def encode_event(self, event: Event) -> bytes: ...

    def decode_event(self, data: bytes | str) -> Event: ...
