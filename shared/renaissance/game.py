"""Whole games: replay a stream of events, and play a game in process with bots."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import msgspec

from renaissance import commands as c
from renaissance import events as e
from renaissance.bots import make_bot
from renaissance.components import COLOURS
from renaissance.rules import evolve, execute
from renaissance.state import GameState


def replay(events: Iterable[e.Event]) -> GameState | None:
    """The state after a stream of events: a fold of ``evolve``, shared by every reader."""
    state: GameState | None = None
    for event in events:
        state = evolve(state, event)
    return state


def simulation_id(seed: str) -> str:
    return "sim-rn-" + hashlib.sha256(seed.encode()).hexdigest()[:12]


def bot_seed(seed: str, seat: int) -> str:
    """Each seat's bot gets its own seed derived from the game's."""
    return f"{seed}|bot|{seat}"


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


class Outcome(msgspec.Struct, frozen=True):
    """The result of a whole game: final scores by seat, ranking and winners."""

    game_id: str
    game: str
    players: int
    bots: list[str]
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    colours: list[str]
    events: int
    sets: int = 1
    sets_won: list[int] = []
    set_scores: list[list[int]] = []


def play(
    seed: str,
    bots: Sequence[str],
    *,
    sets: int = 1,
    competition: str = "points",
    variant: c.Variant | None = None,
    game_id: str | None = None,
    max_commands: int = 100_000,
) -> tuple[list[e.Event], GameState]:
    """Play a whole game in process: both seats are bots. A Janken hand is sealed with a salt
    derived from the seed, where the service would draw a random one (`with_salt`)."""
    if len(bots) != 2:
        raise ValueError(f"Renaissance needs 2 bots, got {len(bots)}")
    game_id = game_id or simulation_id(seed)
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands(game_id, seed, bots, sets, competition, variant):
        events, state = execute(state, command)
        log += events
    assert state is not None
    for _ in range(max_commands):
        if state.is_over:
            return log, state
        seat = state.current
        command = with_salt(agents[seat].choose(state, seat), simulated_salt(seed, state))
        events, state = execute(state, command)
        log += events
    raise RuntimeError(f"the game did not end within {max_commands} commands")


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
