"""Deciding a command, the same for every game: its events emitted one by one into a batch
(each applied at once, so later steps see its effect), the command's cause on the first, every
event sealed into the hash chain; and replay, the fold of ``evolve`` over a stream.

A game hands the platform a `Rulebook`: its creation command and how to create, its deciders
(one per command type), its ``evolve`` and what its provenance records of a command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar, overload

from msgspec.structs import replace

from gameplatform.chain import Event, seal
from gameplatform.errors import GameAlreadyExists, GameNotFound, InvalidCommand


class Versioned(Protocol):
    """What the platform reads of a game's state: its game, version, last event's hash and
    whether it is over."""

    @property
    def game_id(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def last_hash(self) -> str: ...

    @property
    def is_over(self) -> bool:
        """Whether the game has its result."""
        ...


S = TypeVar("S", bound=Versioned)
E = TypeVar("E", bound=Event)


class Batch(Generic[S, E]):
    """Events of one command, each applied as it is emitted so later steps see its effect.
    The first event records the cause; every event is sealed into the hash chain."""

    def __init__(self, state: S, cause: Any, evolve: Callable[[S | None, E], S]) -> None:
        self.state = state
        self.cause: Any = cause  # the game's own Cause until the first event takes it, then None
        self.events: list[E] = []
        self._evolve = evolve

    @property
    def game_id(self) -> str:
        return self.state.game_id

    @property
    def next_version(self) -> int:
        """The version of the next event emitted."""
        return self.state.version + 1

    @overload
    def emit(self, event: E, /) -> None: ...

    @overload
    def emit(self, kind: type[E], /, **fields: Any) -> None: ...

    def emit(self, event: E | type[E], /, **fields: Any) -> None:
        """Apply an event (made with `game_id` and `next_version`), or one of type ``kind`` made
        here from ``fields``, the command's cause on the batch's first event, sealed into the
        hash chain."""
        if isinstance(event, type):
            made = event(
                game_id=self.game_id, version=self.next_version, cause=self.cause, **fields
            )
        else:
            made = replace(event, cause=self.cause)
        event = seal(made, self.state.last_hash)
        self.cause = None
        self.events.append(event)
        self.state = self._evolve(self.state, event)


C = TypeVar("C")


class Rulebook(Generic[S, C, E]):
    """A game's rules as the platform runs them: ``execute`` and ``decide`` for every command,
    ``replay`` for every stream. ``creation`` is the command that creates a game (``create``
    makes its event), ``deciders`` decide every other command type into a `Batch`, ``cause`` is
    the provenance recorded of a command (a game leaves secrets out of it), ``after`` runs after
    every decider (Renature's bots playing on for timed-out seats)."""

    def __init__(
        self,
        *,
        creation: type,
        create: Callable[[Any], E],
        deciders: Mapping[type, Callable[[Batch[S, E], Any], None]],
        evolve: Callable[[S | None, E], S],
        cause: Callable[[Any, str | None, str | None], object],
        after: Callable[[Batch[S, E]], None] | None = None,
    ) -> None:
        self.creation = creation
        self.create = create
        self.deciders = deciders
        self.evolve = evolve
        self.cause = cause
        self.after = after

    def execute(
        self, state: S | None, command: C, *, command_id: str | None = None, time: str | None = None
    ) -> tuple[list[E], S]:
        """Decide a command and return its events together with the state after them.

        ``command_id`` and ``time`` are provenance given by the caller (a core has no clock);
        they are recorded in the first event's ``cause``."""
        cause = self.cause(command, command_id, time)
        if isinstance(command, self.creation):
            if state is not None:
                game_id = getattr(command, "game_id", "")
                raise GameAlreadyExists(f"A game with id {game_id!r} exists already.")
            created = seal(replace(self.create(command), cause=cause), "")
            return [created], self.evolve(None, created)
        if state is None:
            raise GameNotFound("There is no such game; create it first.")
        handler = self.deciders.get(type(command))
        if handler is None:
            raise InvalidCommand(f"Unknown command {type(command).__name__}.")
        batch = Batch(state, cause, self.evolve)
        handler(batch, command)
        if self.after is not None:
            self.after(batch)
        return batch.events, batch.state

    def decide(
        self, state: S | None, command: C, *, command_id: str | None = None, time: str | None = None
    ) -> list[E]:
        """Validate ``command`` against ``state``; return its events or raise a ``RuleError``."""
        return self.execute(state, command, command_id=command_id, time=time)[0]

    def replay(self, events: Iterable[E]) -> S | None:
        """The state after a stream of events: a fold of ``evolve``, shared by every reader."""
        state: S | None = None
        for event in events:
            state = self.evolve(state, event)
        return state
