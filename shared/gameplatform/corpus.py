"""The corpus check, the same for every game: a recorded game replayed must find the same
number of legal actions before every command, the same result and the same event log byte for
byte (its SHA-256), like perft in chess. A game's corpus module records its games and says how
to replay one; this compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from gameplatform.chain import Event, log_digest
from gameplatform.errors import RuleError

Command = TypeVar("Command")


class Record(msgspec.Struct, Generic[Command], frozen=True, kw_only=True):
    """What every game's corpus record holds after how its game is set up (a game's record
    subclasses it with those fields, which come first in its JSON)."""

    commands: list[Command]
    """The seat commands played, in order."""
    legal_actions: list[int]
    """How many legal actions the acting seat had just before each command."""
    events: int
    log_sha256: str
    """SHA-256 of the event log as ``simulate --events`` writes it (`chain.log_digest`)."""
    scores: list[int]
    ranking: list[int]
    winners: list[int]


R = TypeVar("R", bound=Record[Any])


def check(game: R, replayed: Callable[[R], R]) -> list[str]:
    """Replay a corpus game; what differs from the record (empty when everything agrees)."""
    if len(game.legal_actions) != len(game.commands):
        return ["the record has not one legal-action count per command"]
    try:
        found = replayed(game)
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
    found_result = (found.events, found.scores, found.ranking)
    expected_result = (game.events, game.scores, game.ranking)
    if found_result != expected_result:
        problems.append(f"(events, scores, ranking) {found_result}, not {expected_result}")
    if found.winners != game.winners:
        problems.append(f"winners {found.winners}, not {game.winners}")
    if found.log_sha256 != game.log_sha256:
        problems.append("the event log differs from the recorded one")
    return problems


def recorded(
    played: list[Any],
    counts: list[int],
    log: Sequence[Event],
    result: tuple[list[int], list[int], list[int]],
) -> dict[str, Any]:
    """The platform's fields of a record (`Record`) of a game replayed: its commands, the
    legal-action counts, its log's length and digest, and its (scores, ranking, winners)."""
    scores, ranking, winners = result
    return {
        "commands": played,
        "legal_actions": counts,
        "events": len(log),
        "log_sha256": log_digest(log),
        "scores": scores,
        "ranking": ranking,
        "winners": winners,
    }
