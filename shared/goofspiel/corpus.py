"""A corpus of recorded Goofspiel games to test any implementation against (like perft).

Each game is given by its bots and options (its seed is named after them); for each bid it
records how many legal actions the bidding seat had just before it, and at the end the scores,
ranking and winners. ``log_sha256`` pins this implementation's event log byte for byte
(``docs/corpus-goofspiel.jsonl``; ``renature corpus --game goofspiel`` prints it).
"""

from __future__ import annotations

from gameplatform import corpus
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.errors import RuleError
from goofspiel.game import play, setup_commands, simulation_id
from goofspiel.rules import execute, legal_actions
from goofspiel.state import GameState

GAMES: tuple[tuple[tuple[str, str], int, str], ...] = (
    (("random", "random"), 13, "discard"),
    (("greedy", "greedy"), 13, "discard"),
    (("random", "greedy"), 13, "discard"),
    (("greedy", "random"), 13, "carry"),
    (("random", "random"), 13, "carry"),
    (("random", "greedy"), 5, "discard"),
)
"""(bots, cards, ties) of the corpus games."""


class _Named(corpus.Record[c.Bid], frozen=True, kw_only=True):
    """The platform's record, its game named last."""

    game: str = "goofspiel"


class CorpusGame(_Named, frozen=True, forbid_unknown_fields=True):
    """The record of a game of ``cards`` cards and tie rule ``ties``, played by ``bots``."""

    seed: str
    bots: list[str]
    cards: int
    ties: str


def seed_of(bots: tuple[str, str], cards: int, ties: str) -> str:
    return f"corpus-goofspiel-{bots[0]}-{bots[1]}-{cards}-{ties}"


def record(bots: tuple[str, str], cards: int, ties: str) -> CorpusGame:
    seed = seed_of(bots, cards, ties)
    log, _ = play(seed, list(bots), c.Options(cards=cards, ties=ties))  # type: ignore[arg-type]
    bids = [
        ev.cause.command
        for ev in log
        if ev.cause is not None and isinstance(ev.cause.command, c.Bid)
    ]
    return _replayed(seed, list(bots), cards, ties, bids)


def check(game: CorpusGame) -> list[str]:
    """Replay a corpus game; what differs from the record (empty when everything agrees)."""
    return corpus.check(
        game,
        lambda again: _replayed(again.seed, again.bots, again.cards, again.ties, again.commands),
    )


def _replayed(seed: str, bots: list[str], cards: int, ties: str, bids: list[c.Bid]) -> CorpusGame:
    options = c.Options(cards=cards, ties=ties)  # type: ignore[arg-type]
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands(simulation_id(seed), seed, bots, options):
        events, state = execute(state, command)
        log += events
    assert state is not None
    counts = []
    for bid in bids:
        counts.append(len(legal_actions(state, bid.seat)))
        events, state = execute(state, bid)
        log += events
    if state.phase != "final_scoring":
        raise RuleError("the game does not end with the last recorded bid")
    events, state = execute(state, c.FinishGame(seed=seed))
    log += events
    result = (list(state.scores), list(state.ranking), list(state.winners))
    return CorpusGame(
        seed=seed, bots=bots, cards=cards, ties=ties, **corpus.recorded(bids, counts, log, result)
    )
