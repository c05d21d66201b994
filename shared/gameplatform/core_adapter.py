"""What every adapter forwards the same way: the rules through the game's `Rulebook`, rule
errors, bot seeds and the event codec. An adapter names its game's ``rules`` (and the types of
`CommandForms`) and forwards only what is its game's own."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from gameplatform import chain, search, simulation
from gameplatform.errors import RuleError
from gameplatform.execution import Rulebook
from gameplatform.forms import CommandForms, decoder
from gameplatform.interface import Table


class CoreAdapter(CommandForms):
    """``execute``, ``decide``, ``evolve``, ``replay``, ``is_rule_error``, ``is_over``,
    ``bot_seed``, ``encode_event`` and ``decode_event`` of the `Game` protocol, from the
    adapter's ``rules`` and ``event_type``."""

    rules: Rulebook[Any, Any, Any]
    event_type: Any
    name: str
    hidden_information: bool
    table: Callable[[Any], Table]
    evaluation_scale: float = 10.0
    """How many points ahead count as clearly ahead in `evaluate`'s default."""
    search_budget: search.Budget = search.DEFAULT_BUDGET
    """The budget of the game's ``mcts`` bot (what a move may cost in this game)."""

    def execute(
        self,
        state: Any | None,
        command: Any,
        *,
        command_id: str | None = None,
        time: str | None = None,
    ) -> tuple[list[Any], Any]:
        return self.rules.execute(state, command, command_id=command_id, time=time)

    def decide(self, state: Any | None, command: Any) -> list[Any]:
        return self.rules.decide(state, command)

    def evolve(self, state: Any | None, event: Any) -> Any:
        return self.rules.evolve(state, event)

    def replay(self, events: Sequence[Any]) -> Any | None:
        return self.rules.replay(events)

    def is_rule_error(self, error: Exception) -> bool:
        return isinstance(error, RuleError)

    def board_geometry(self, board: str) -> Any | None:
        return None  # drawn from its picture alone, unless the game says more

    def is_over(self, state: Any) -> bool:
        return bool(state.is_over)

    def determinize(self, state: Any, seat: int, rng: random.Random, seed: str) -> Any:
        """The state itself: a game without hidden information has nothing to sample. A game
        with hidden information must say how to sample it (the search refuses to guess)."""
        if self.hidden_information:
            raise NotImplementedError(f"{self.name} hides information and has no determinize")
        return state

    def evaluate(self, state: Any) -> list[float]:
        return search.margin_values(self.table(state).scores, self.evaluation_scale)

    def bot_seed(self, seed: str, seat: int) -> str:
        return simulation.bot_seed(seed, seat)

    def encode_event(self, event: chain.Event) -> bytes:
        return chain.encode(event)

    def decode_event(self, data: bytes | str) -> Any:
        return decoder(self.event_type).decode(data)
