"""Whole games: replay a stream of events, and play a game in process with bots."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import msgspec

from gameplatform import simulation
from gameplatform.simulation import bot_seed as bot_seed  # the platform's, re-exported
from renaissance import commands as c
from renaissance import events as e
from renaissance.bots import Bot, make_bot
from renaissance.components import COLOURS
from renaissance.rules import RULES
from renaissance.state import GameState

replay = RULES.replay
"""The state after a stream of events: the platform's fold of ``evolve``."""


def simulation_id(seed: str) -> str:
    return simulation.simulation_id(seed, "sim-rn-")


def setup_commands(
    game_id: str,
    seed: str,
    names: Sequence[str],
    sets: int = 1,
    competition: str = "points",
    variant: c.Variant | None = None,
) -> list[c.Command]:
    return [
        c.CreateGame(
            game_id=game_id,
            seed=seed,
            sets=sets,
            competition=competition,  # type: ignore[arg-type]
            variant=msgspec.UNSET if variant is None else variant,
        ),
        *(c.JoinGame(seat, name) for seat, name in enumerate(names)),
        c.StartGame(),
    ]


class _Sets(simulation.Outcome, frozen=True, kw_only=True):
    """The platform's outcome, then the sets (as ``simulate`` has always written them)."""

    sets: int = 1
    sets_won: list[int] = []
    set_scores: list[list[int]] = []


class Outcome(_Sets, frozen=True):
    """The platform's outcome of a Renaissance game, with its sets."""

    game_id: str
    game: str


def play(
    seed: str,
    bots: Sequence[str],
    *,
    sets: int = 1,
    competition: str = "points",
    variant: c.Variant | None = None,
    game_id: str | None = None,
    max_commands: int = 100_000,
    make: Callable[[str, str], Bot] = make_bot,
) -> tuple[list[e.Event], GameState]:
    """Play a whole game in process: both seats are bots (``make(name, seed)`` makes each;
    the adapter's also makes the platform's search bot). A Janken hand is sealed with a salt
    derived from the seed, where the service would draw a random one (`with_salt`)."""
    if len(bots) != 2:
        raise ValueError(f"Renaissance needs 2 bots, got {len(bots)}")
    game_id = game_id or simulation_id(seed)
    agents = [make(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    setup = setup_commands(game_id, seed, bots, sets, competition, variant)

    def salted(state: GameState, command: c.Command) -> c.Command:
        return with_salt(command, simulated_salt(seed, state))

    return simulation.play_out(RULES, setup, agents, prepare=salted, max_commands=max_commands)


def with_salt(command: c.Command, salt: str) -> c.Command:
    """A Janken hand sealed with ``salt`` (the service's random one); other commands as sent."""
    if isinstance(command, c.ShowHand):
        return msgspec.structs.replace(command, salt=salt)
    return command


def simulated_salt(seed: str, state: GameState) -> str:
    """The salt of a simulated game's next hand: derived from its (public) seed, so that
    ``simulate`` stays reproducible; it hides nothing from anyone who knows the seed."""
    return hashlib.sha256(f"{seed}|salt|{state.version}".encode()).hexdigest()[:32]


def outcome(state: GameState, bots: Sequence[str], events: int) -> Outcome:
    """The outcome; ``colours`` are the colours the seats played in the last set."""
    return Outcome(
        game_id=state.game_id,
        game="renaissance",
        players=2,
        bots=list(bots),
        scores=list(state.scores),
        ranking=list(state.ranking),
        winners=list(state.winners),
        colours=[COLOURS[state.colour_of(seat)] for seat in (0, 1)],
        events=events,
        sets=state.sets,
        sets_won=list(state.sets_won),
        set_scores=[list(r) for r in state.set_results],
    )
