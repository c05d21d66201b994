"""Whole games: replay a stream of events, and play a game in process with bots."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gameplatform import simulation
from gameplatform.simulation import bot_seed as bot_seed  # the platform's, re-exported
from renature import commands as c
from renature import events as e
from renature.bots import Bot, make_bot
from renature.rules import RULES
from renature.state import GameState

replay = RULES.replay
"""The state after a stream of events: the platform's fold of ``evolve``."""


def simulation_id(seed: str) -> str:
    return simulation.simulation_id(seed, "sim-")


def setup_commands(
    game_id: str, players: int, seed: str, board: str, names: Sequence[str]
) -> list[c.Command]:
    return [
        c.CreateGame(game_id=game_id, players=players, seed=seed, board=board),
        *(c.JoinGame(seat, name) for seat, name in enumerate(names)),
        c.StartGame(),
    ]


class Outcome(simulation.Outcome, frozen=True):
    """The platform's outcome of a game on ``board``."""

    game_id: str
    board: str


def play(
    players: int,
    seed: str,
    bots: Sequence[str],
    board: str = "base",
    game_id: str | None = None,
    max_commands: int = 100_000,
    make: Callable[[str, str], Bot] = make_bot,
) -> tuple[list[e.Event], GameState]:
    """Play a whole game in process: every seat is a bot (``make(name, seed)`` makes each; the
    adapter's also makes the platform's search bot); the seed is revealed at the end."""
    if len(bots) != players:
        raise ValueError(f"{players} players need {players} bots, got {len(bots)}")
    game_id = game_id or simulation_id(seed)
    agents = [make(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    return simulation.play_out(
        RULES,
        setup_commands(game_id, players, seed, board, bots),
        agents,
        finishing=lambda state: c.FinishGame(seed) if state.phase == "final_scoring" else None,
        max_commands=max_commands,
    )


def outcome(state: GameState, bots: Sequence[str], events: int) -> Outcome:
    from renature.components import COLOURS

    return Outcome(
        game_id=state.game_id,
        board=state.board_id,
        players=state.players,
        bots=list(bots),
        scores=[seat.score for seat in state.seats],
        ranking=list(state.result),
        winners=list(state.winners),
        colours=[COLOURS[seat.colour] for seat in state.seats],
        events=events,
    )


def simulate(
    seed: str, bots: Sequence[str], board: str, make: Callable[[str, str], Bot] = make_bot
) -> tuple[list[e.Event], GameState, Outcome]:
    """A whole game played by ``bots`` on ``board``: its events, last state and outcome."""
    log, state = play(len(bots), seed, bots, board=board, make=make)
    return log, state, outcome(state, bots, len(log))
