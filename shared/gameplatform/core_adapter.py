"""What every adapter forwards the same way: the rules through the game's `Rulebook`, rule
errors, bot seeds and the event codec. An adapter names its game's ``rules`` (and the types of
`CommandForms`) and forwards only what is its game's own."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from gameplatform import chain, search, simulation
from gameplatform.errors import RuleError
from gameplatform.execution import Rulebook, Versioned
from gameplatform.forms import CommandForms, decoder
from gameplatform.interface import Table

S = TypeVar("S", bound=Versioned)
C = TypeVar("C", bound=msgspec.Struct)
E = TypeVar("E", bound=chain.Event)


class CoreAdapter(CommandForms, Generic[S, C, E]):
    """``execute``, ``decide``, ``evolve``, ``replay``, ``is_rule_error``, ``is_over``,
    ``bot_seed``, ``encode_event`` and ``decode_event`` of the `Game` protocol, from the
    adapter's ``rules`` and ``event_type``."""

    rules: Rulebook[S, C, E]
    event_type: Any
    """The union of the game's events (a type expression msgspec decodes)."""
    name: str
    hidden_information: bool
    table: Callable[[S], Table]
    evaluation_scale: float = 10.0
    """How many points ahead count as clearly ahead in `evaluate`'s default."""
    search_budget: search.Budget = search.DEFAULT_BUDGET
    """The budget of the game's ``mcts`` bot (what a move may cost in this game)."""
    state_unencoded: tuple[str, ...] = ()
    """Fields of the state held in Python but never sent (`Game.state_unencoded`)."""

    def execute(
        self,
        state: S | None,
        command: C,
        *,
        command_id: str | None = None,
        time: str | None = None,
    ) -> tuple[list[E], S]:
        return self.rules.execute(state, command, command_id=command_id, time=time)

    def decide(self, state: S | None, command: C) -> list[E]:
        return self.rules.decide(state, command)

    def evolve(self, state: S | None, event: E) -> S:
        return self.rules.evolve(state, event)

    def replay(self, events: Sequence[E]) -> S | None:
        return self.rules.replay(events)

    def is_rule_error(self, error: Exception) -> bool:
        return isinstance(error, RuleError)

    def board_geometry(self, board: str) -> msgspec.Struct | None:
        return None  # drawn from its picture alone, unless the game says more

    def is_over(self, state: S) -> bool:
        return state.is_over

    def determinize(self, state: S, seat: int, rng: random.Random, seed: str) -> S:
        """The state itself: a game without hidden information has nothing to sample. A game
        with hidden information must say how to sample it (the search refuses to guess)."""
        if self.hidden_information:
            raise NotImplementedError(f"{self.name} hides information and has no determinize")
        return state

    def evaluate(self, state: S) -> list[float]:
        return search.margin_values(self.table(state).scores, self.evaluation_scale)

    def bot_seed(self, seed: str, seat: int) -> str:
        return simulation.bot_seed(seed, seat)

    def encode_event(self, event: E) -> bytes:
        return chain.encode(event)

    def decode_event(self, data: bytes | str) -> E:
        event: E = decoder(self.event_type).decode(data)  # the union of the game's events
        return event
