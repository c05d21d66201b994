"""Whole games: replay a stream of events, and play a game in process with bots."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import msgspec

from renature import commands as c
from renature import events as e
from renature.bots import make_bot
from renature.rules import evolve, execute
from renature.state import GameState


def replay(events: Iterable[e.Event]) -> GameState | None:
    """The state after a stream of events: a fold of ``evolve``, shared by every reader."""
    state: GameState | None = None
    for event in events:
        state = evolve(state, event)
    return state


def simulation_id(seed: str) -> str:
    return "sim-" + hashlib.sha256(seed.encode()).hexdigest()[:12]


def bot_seed(seed: str, seat: int) -> str:
    """Each seat's bot gets its own seed derived from the game's."""
    return f"{seed}|bot|{seat}"


def setup_commands(
    game_id: str, players: int, seed: str, board: str, names: Sequence[str]
) -> list[c.Command]:
    return [
        c.CreateGame(game_id=game_id, players=players, seed=seed, board=board),
        *(c.JoinGame(seat, name) for seat, name in enumerate(names)),
        c.StartGame(),
    ]


class Outcome(msgspec.Struct, frozen=True):
    """The result of a whole game: final scores by seat, ranking and winners."""

    game_id: str
    board: str
    players: int
    bots: list[str]
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]
    events: int


def play(
    players: int,
    seed: str,
    bots: Sequence[str],
    board: str = "base",
    game_id: str | None = None,
    max_commands: int = 100_000,
) -> tuple[list[e.Event], GameState]:
    """Play a whole game in process: every seat is a bot; the seed is revealed at the end."""
    if len(bots) != players:
        raise ValueError(f"{players} players need {players} bots, got {len(bots)}")
    game_id = game_id or simulation_id(seed)
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands(game_id, players, seed, board, bots):
        events, state = execute(state, command)
        log += events
    assert state is not None
    for _ in range(max_commands):
        if state.phase == "final_scoring":
            events, state = execute(state, c.FinishGame(seed))
            log += events
        if state.phase == "finished":
            return log, state
        seat = state.current
        events, state = execute(state, agents[seat].choose(state, seat))
        log += events
    raise RuntimeError(f"the game did not end within {max_commands} commands")


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
