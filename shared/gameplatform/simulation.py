"""Whole games in process, the same for every game: a game set up by its commands and played
out by bots (one per seat, each seeded from the game's seed), and a recorded list of seat
commands replayed with the acting seat's legal actions counted before each (the corpus); and
`RandomBot`, the bot every game has, that plays any legal action."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from gameplatform.chain import Event
from gameplatform.execution import Rulebook, Versioned


class Playing(Versioned, Protocol):
    """What a whole game in process reads of a state: whether it is over, whose turn it is."""

    @property
    def is_over(self) -> bool: ...

    @property
    def current(self) -> int: ...


S = TypeVar("S", bound=Playing)
E = TypeVar("E", bound=Event)


class Agent(Protocol):
    def choose(self, state: Any, seat: int) -> Any: ...


def simulation_id(seed: str, prefix: str = "sim-") -> str:
    """The id of a game simulated from ``seed`` (a game names its own prefix)."""
    return prefix + hashlib.sha256(seed.encode()).hexdigest()[:12]


def bot_seed(seed: str, seat: int) -> str:
    """Each seat's bot gets its own seed derived from the game's."""
    return f"{seed}|bot|{seat}"


def set_up(rules: Rulebook[S, Any, E], commands: Sequence[Any]) -> tuple[list[E], S]:
    """A game created, joined and started by its set-up commands: its events and state."""
    log: list[E] = []
    state: S | None = None
    for command in commands:
        events, state = rules.execute(state, command)
        log += events
    if state is None:
        raise ValueError("a game's set-up starts with its creation")
    return log, state


def play_out(
    rules: Rulebook[S, Any, E],
    setup: Sequence[Any],
    agents: Sequence[Agent],
    *,
    finishing: Callable[[S], Any | None] = lambda _: None,
    prepare: Callable[[S, Any], Any] = lambda _, command: command,
    max_commands: int = 100_000,
) -> tuple[list[E], S]:
    """Play a whole game in process, every seat a bot; ``finishing`` gives the system's
    command that ends a game whose last move is made (Renature reveals its seed), if any;
    ``prepare`` adds the system's part to a seat's command (a salt the service draws)."""
    log, state = set_up(rules, setup)
    for _ in range(max_commands):
        finish = finishing(state)
        if finish is not None:
            events, state = rules.execute(state, finish)
            log += events
        if state.is_over:
            return log, state
        seat = state.current
        events, state = rules.execute(state, prepare(state, agents[seat].choose(state, seat)))
        log += events
    raise RuntimeError(f"the game did not end within {max_commands} commands")


def replay_counting(
    rules: Rulebook[S, Any, E],
    setup: Sequence[Any],
    played: Sequence[Any],
    legal_actions: Callable[[S, int], Sequence[Any]],
) -> tuple[list[E], list[int], S]:
    """A recorded game replayed: its log, the acting seat's number of legal actions before
    each played command, and the state after the last. Raises the game's ``RuleError`` for a
    command the rules refuse."""
    log, state = set_up(rules, setup)
    counts = []
    for command in played:
        counts.append(len(legal_actions(state, command.seat)))
        events, state = rules.execute(state, command)
        log += events
    return log, counts, state


B = TypeVar("B")


class RandomBot:
    """Any legal action, uniformly, from the bot's own seeded generator (``random.Random``)."""

    def __init__(self, seed: str, legal_actions: Callable[[Any, int], Sequence[Any]]) -> None:
        self.rng = random.Random(seed)
        self._legal_actions = legal_actions

    def choose(self, state: Any, seat: int) -> Any:
        return self.rng.choice(self._legal_actions(state, seat))


def make_bot(kinds: Mapping[str, Callable[[str], B]], name: str, seed: str) -> B:
    """The bot called ``name`` of a game's ``kinds``, seeded with ``seed``."""
    kind = kinds.get(name)
    if kind is None:
        raise ValueError(f"Unknown bot {name!r}; bots: {', '.join(kinds)}")
    return kind(seed)


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """The result of a whole game as ``simulate`` reports it, after the fields a game names it
    by (which come first in its JSON): final scores by seat, ranking and winners."""

    players: int
    bots: list[str]
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]
    events: int
