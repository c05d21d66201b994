"""A corpus of recorded Renaissance games to test any implementation against (like perft).

Each game is given by its seed, bots and set count; for each seat command it records how many
legal actions the acting seat had just before it, and at the end the scores, ranking and
winners. Another implementation replays the commands and must find the same numbers at every
step. ``log_sha256`` pins this implementation's event log byte for byte.
"""

from __future__ import annotations

import hashlib

import msgspec

from renaissance import commands as c
from renaissance import events as e
from renaissance.errors import RuleError
from renaissance.game import play, setup_commands, simulation_id
from renaissance.rules import execute, legal_actions
from renaissance.state import GameState

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


class CorpusGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seed: str
    bots: list[str]
    sets: int
    competition: str
    commands: list[c.SeatCommand]
    legal_actions: list[int]
    """How many legal actions the acting seat had just before each command."""
    events: int
    log_sha256: str
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    game: str = "renaissance"
    variant: c.Variant | msgspec.UnsetType = msgspec.UNSET
    """The variant played; absent for the standard rules."""


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
    if len(game.legal_actions) != len(game.commands):
        return ["the record has not one legal-action count per command"]
    try:
        variant = None if isinstance(game.variant, msgspec.UnsetType) else game.variant
        found = _replayed(game.seed, game.bots, game.sets, game.competition, game.commands, variant)
    except RuleError as error:
        return [f"a recorded command is refused: {error.message}"]
    for number, (command, counted, recorded) in enumerate(
        zip(game.commands, found.legal_actions, game.legal_actions, strict=True), start=1
    ):
        if counted != recorded:
            return [
                f"command {number}: seat {command.seat} has {counted} legal actions, not {recorded}"
            ]
    problems = []
    if (found.events, found.scores, found.ranking) != (game.events, game.scores, game.ranking):
        problems.append(
            f"(events, scores, ranking) {(found.events, found.scores, found.ranking)}, "
            f"not {(game.events, game.scores, game.ranking)}"
        )
    if found.winners != game.winners:
        problems.append(f"winners {found.winners}, not {game.winners}")
    if found.log_sha256 != game.log_sha256:
        problems.append("the event log differs from the recorded one")
    return problems


def log_digest(log: list[e.Event]) -> str:
    digest = hashlib.sha256()
    for event in log:
        digest.update(e.encode(event) + b"\n")
    return digest.hexdigest()


def _replayed(
    seed: str,
    bots: list[str],
    sets: int,
    competition: str,
    played: list[c.SeatCommand],
    variant: c.Variant | None = None,
) -> CorpusGame:
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands(simulation_id(seed), seed, bots, sets, competition, variant):
        events, state = execute(state, command)
        log += events
    assert state is not None
    counts = []
    for command in played:
        counts.append(len(legal_actions(state, command.seat)))
        events, state = execute(state, command)
        log += events
    if not state.is_over:
        raise RuleError("the game does not end with the last recorded command")
    return CorpusGame(
        seed=seed,
        bots=bots,
        sets=sets,
        competition=competition,
        commands=played,
        legal_actions=counts,
        events=len(log),
        log_sha256=log_digest(log),
        scores=list(state.scores),
        ranking=list(state.ranking),
        winners=list(state.winners),
        variant=msgspec.UNSET if variant is None else variant,
    )
