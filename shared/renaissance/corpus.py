"""A corpus of recorded Renaissance games to test any implementation against (like perft).

Each game is given by its seed, bots and set count; for each seat command it records how many
legal actions the acting seat had just before it, and at the end the scores, ranking and
winners. Another implementation replays the commands and must find the same numbers at every
step. ``log_sha256`` pins this implementation's event log byte for byte.
"""

from __future__ import annotations

from gameplatform import corpus, simulation
from renaissance import commands as c
from renaissance.errors import RuleError
from renaissance.game import play, setup_commands, simulation_id
from renaissance.rules import RULES, legal_actions

GAMES: tuple[tuple[tuple[str, str], int, str], ...] = (
    (("random", "random"), 1, "points"),
    (("greedy", "greedy"), 1, "points"),
    (("random", "greedy"), 1, "points"),
    (("greedy", "random"), 1, "points"),
    (("random", "random"), 2, "sets"),
    (("greedy", "random"), 2, "points"),
)
"""(bots, sets, competition) of the corpus games."""


class _Named(corpus.Record[c.SeatCommand], frozen=True, kw_only=True):
    """The platform's record, its game named last (as the published lines have it)."""

    game: str = "renaissance"


class CorpusGame(_Named, frozen=True, forbid_unknown_fields=True):
    """The record of a game of ``sets`` sets and ``competition``, played by ``bots``."""

    seed: str
    bots: list[str]
    sets: int
    competition: str


def seed_of(bots: tuple[str, str], sets: int, competition: str) -> str:
    return f"corpus-renaissance-{bots[0]}-{bots[1]}-{sets}-{competition}"


def record(bots: tuple[str, str], sets: int, competition: str) -> CorpusGame:
    seed = seed_of(bots, sets, competition)
    log, _ = play(seed, list(bots), sets=sets, competition=competition)
    played = [
        event.cause.command
        for event in log
        if event.cause is not None and isinstance(event.cause.command, c.SeatCommand)
    ]
    return _replayed(seed, list(bots), sets, competition, played)


def check(game: CorpusGame) -> list[str]:
    """Replay a corpus game; what differs from the record (empty when everything agrees)."""
    return corpus.check(game, _replayed_record)


def _replayed_record(game: CorpusGame) -> CorpusGame:
    return _replayed(game.seed, game.bots, game.sets, game.competition, game.commands)


def _replayed(
    seed: str, bots: list[str], sets: int, competition: str, played: list[c.SeatCommand]
) -> CorpusGame:
    setup = setup_commands(simulation_id(seed), seed, bots, sets, competition)
    log, counts, state = simulation.replay_counting(RULES, setup, played, legal_actions)
    if not state.is_over:
        raise RuleError("the game does not end with the last recorded command")
    result = (list(state.scores), list(state.ranking), list(state.winners))
    return CorpusGame(
        seed=seed,
        bots=bots,
        sets=sets,
        competition=competition,
        **corpus.recorded(played, counts, log, result),
    )
