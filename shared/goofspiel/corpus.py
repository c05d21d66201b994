"""A corpus of recorded Goofspiel games to test any implementation against (like perft).

Each game is given by its bots and options (its seed is named after them); for each bid it
records how many legal actions the bidding seat had just before it, and at the end the scores,
ranking and winners. ``log_sha256`` pins this implementation's event log byte for byte
(``docs/corpus-goofspiel.jsonl``; ``renature corpus --game goofspiel`` prints it).
"""

from __future__ import annotations

from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.errors import RuleError
from goofspiel.for_platform import CorpusRecord, check_corpus, log_digest
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


class CorpusGame(CorpusRecord, frozen=True, kw_only=True, forbid_unknown_fields=True):
    cards: int
    ties: str
    commands: list[c.Bid]
    game: str = "goofspiel"


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
    return check_corpus(
        game, lambda: _replayed(game.seed, game.bots, game.cards, game.ties, game.commands)
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
    return CorpusGame(
        seed=seed,
        bots=bots,
        cards=cards,
        ties=ties,
        commands=bids,
        legal_actions=counts,
        events=len(log),
        log_sha256=log_digest(e.encode(event) for event in log),
        scores=list(state.scores),
        ranking=list(state.ranking),
        winners=list(state.winners),
    )
