"""A corpus of recorded Renaissance games to test any implementation against (like perft).

Each game is given by its seed, bots and set count; for each seat command it records how many
legal actions the acting seat had just before it, and at the end the scores, ranking and
winners. Another implementation replays the commands and must find the same numbers at every
step. ``log_sha256`` pins this implementation's event log byte for byte.
"""

from __future__ import annotations

import msgspec

from gameplatform import corpus, simulation
from renaissance import commands as c
from renaissance.errors import RuleError
from renaissance.game import play, setup_commands, simulation_id
from renaissance.legal_moves import legal_actions
from renaissance.rules import RULES

GAMES: tuple[tuple[tuple[str, str], int, str, c.Variant | None], ...] = (
    (("random", "random"), 1, "points", None),
    (("greedy", "greedy"), 1, "points", None),
    (("random", "greedy"), 1, "points", None),
    (("greedy", "random"), 1, "points", None),
    (("random", "random"), 2, "sets", None),
    (("greedy", "random"), 2, "points", None),
    (("random", "greedy"), 1, "points", c.Variant("phase1", ["rectangle", "ring"])),
    (("greedy", "greedy"), 2, "sets", c.Variant("phase1", ["rectangle"])),
    (("random", "random"), 1, "points", c.Variant("phase2", distribution="take")),
    (("greedy", "random"), 2, "points", c.Variant("phase2", distribution="give")),
    (("random", "greedy"), 1, "points", c.Variant("phase2", [], "take", phase2_agreement=True)),
    (("random", "random"), 1, "points", c.Variant(phase2_agreement=True)),
)
"""(bots, sets, competition, variant) of the corpus games: the standard rules (no variant),
then each variant (rulings 13 to 16)."""


class _Named(corpus.Record[c.SeatCommand], frozen=True, kw_only=True):
    """The platform's record, its game named last (as the published lines have it)."""

    game: str = "renaissance"


class _Varied(_Named, frozen=True, kw_only=True):
    """The variant played, after the game's name; absent for the standard rules."""

    variant: c.Variant | msgspec.UnsetType = msgspec.UNSET


class CorpusGame(_Varied, frozen=True, forbid_unknown_fields=True):
    """The record of a game of ``sets`` sets and ``competition``, played by ``bots``."""

    seed: str
    bots: list[str]
    sets: int
    competition: str


def variant_name(variant: c.Variant | None) -> str:
    """A short name of a variant: ``phase1-rectangle-ring``, ``phase2-give-agreement``."""
    if variant is None:
        return "standard"
    words: list[str] = [variant.play, *variant.extra_hands, variant.distribution or ""]
    words.append("agreement" if variant.phase2_agreement else "")
    return "-".join(word for word in words if word)


def seed_of(
    bots: tuple[str, str], sets: int, competition: str, variant: c.Variant | None = None
) -> str:
    seed = f"corpus-renaissance-{bots[0]}-{bots[1]}-{sets}-{competition}"
    return seed if variant is None else f"{seed}-{variant_name(variant)}"


def record(
    bots: tuple[str, str], sets: int, competition: str, variant: c.Variant | None = None
) -> CorpusGame:
    seed = seed_of(bots, sets, competition, variant)
    log, _ = play(seed, list(bots), sets=sets, competition=competition, variant=variant)
    played = [
        event.cause.command
        for event in log
        if event.cause is not None and isinstance(event.cause.command, c.SeatCommand)
    ]
    return _replayed(seed, list(bots), sets, competition, played, variant)


def check(game: CorpusGame) -> list[str]:
    """Replay a corpus game; what differs from the record (empty when everything agrees)."""
    return corpus.check(game, _replayed_record)


def _replayed_record(game: CorpusGame) -> CorpusGame:
    variant = None if isinstance(game.variant, msgspec.UnsetType) else game.variant
    return _replayed(game.seed, game.bots, game.sets, game.competition, game.commands, variant)


def _replayed(
    seed: str,
    bots: list[str],
    sets: int,
    competition: str,
    played: list[c.SeatCommand],
    variant: c.Variant | None = None,
) -> CorpusGame:
    setup = setup_commands(simulation_id(seed), seed, bots, sets, competition, variant)
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
        variant=msgspec.UNSET if variant is None else variant,
    )


_decoder = msgspec.json.Decoder(CorpusGame)


def records() -> list[CorpusGame]:
    """Every corpus game, played and recorded."""
    return [record(*game) for game in GAMES]


def check_line(line: bytes) -> tuple[str, list[str]]:
    """A corpus game from its JSON line: its name, and what differs from the record."""
    game = _decoder.decode(line)
    return f"{'/'.join(game.bots)}, {game.sets} set(s), {game.seed!r}", check(game)
