"""Whole games: replay a stream of events, and play a game in process with bots."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import msgspec

from gameplatform import simulation
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.bots import Bot, make_bot
from goofspiel.rules import RULES, execute
from goofspiel.state import GameState
from goofspiel.view import COLOURS


def replay(events: Iterable[e.Event]) -> GameState | None:
    """The state after a stream of events (None for none)."""
    return RULES.replay(events)


def simulation_id(seed: str) -> str:
    return simulation.simulation_id(seed, "sim-gs-")


bot_seed = simulation.bot_seed


def setup_commands(
    game_id: str, seed: str, names: Sequence[str], options: c.Options | None = None
) -> list[c.Command]:
    options = options or c.Options()
    return [
        c.CreateGame(
            game_id=game_id,
            seed=seed,
            cards=options.cards,
            ties=options.ties,
            clock=msgspec.UNSET if options.time_control is None else options.time_control,
        ),
        *(c.JoinGame(seat=seat, name=name) for seat, name in enumerate(names)),
        c.StartGame(),
    ]


class _Options(simulation.Outcome, frozen=True, kw_only=True):
    """The platform's outcome, with the game's options and the prizes nobody won."""

    cards: int = c.MAX_CARDS
    ties: str = "discard"
    discarded: list[int] = []


class Outcome(_Options, frozen=True):
    """The outcome of a Goofspiel game, named by its game first."""

    game_id: str
    game: str


def plays(
    seed: str,
    bots: Sequence[str],
    options: c.Options | None = None,
    *,
    game_id: str | None = None,
    make: Callable[[str, str], Bot] = make_bot,
) -> Iterator[tuple[list[e.Event], GameState]]:
    """A whole game in process, command by command: each command's events and the state after
    them. Both seats are bots (``make(name, seed)`` makes each; the adapter's also makes the
    platform's search bot); the seed is revealed at the end as the service reveals it
    (unsalted: an in-process seed is public anyway)."""
    if len(bots) != 2:
        raise ValueError(f"Goofspiel needs 2 bots, got {len(bots)}")
    agents = [make(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    state: GameState | None = None
    for command in setup_commands(game_id or simulation_id(seed), seed, bots, options):
        events, state = execute(state, command)
        yield events, state
    assert state is not None
    while state.to_move is not None:
        events, state = execute(state, agents[state.to_move].choose(state, state.to_move))
        yield events, state
    yield execute(state, c.FinishGame(seed=seed))


def play(
    seed: str,
    bots: Sequence[str],
    options: c.Options | None = None,
    *,
    game_id: str | None = None,
    make: Callable[[str, str], Bot] = make_bot,
) -> tuple[list[e.Event], GameState]:
    """A whole game in process: its events and its final state (see `plays`)."""
    steps = list(plays(seed, bots, options, game_id=game_id, make=make))
    return [event for events, _ in steps for event in events], steps[-1][1]


def outcome(state: GameState, bots: Sequence[str], events: int) -> Outcome:
    return Outcome(
        game_id=state.game_id,
        game="goofspiel",
        players=2,
        bots=list(bots),
        scores=list(state.scores),
        ranking=list(state.ranking),
        winners=list(state.winners),
        colours=list(COLOURS),
        events=events,
        cards=state.cards,
        ties=state.ties,
        discarded=list(state.discarded),
    )
