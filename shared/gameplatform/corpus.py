"""The corpus check, the same for every game: a recorded game replayed must find the same
number of legal actions before every command, the same result and the same event log byte for
byte (its SHA-256), like perft in chess. A game's corpus module records its games and says how
to replay one; this compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from gameplatform.errors import RuleError


class Recorded(Protocol):
    """What every game's corpus record holds (each adds how its game is set up)."""

    @property
    def commands(self) -> Sequence[Any]: ...

    @property
    def legal_actions(self) -> Sequence[int]: ...

    @property
    def events(self) -> int: ...

    @property
    def log_sha256(self) -> str: ...

    @property
    def scores(self) -> Sequence[int]: ...

    @property
    def ranking(self) -> Sequence[int]: ...

    @property
    def winners(self) -> Sequence[int]: ...


R = TypeVar("R", bound=Recorded)


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
    found_result = (found.events, list(found.scores), list(found.ranking))
    expected_result = (game.events, list(game.scores), list(game.ranking))
    if found_result != expected_result:
        problems.append(f"(events, scores, ranking) {found_result}, not {expected_result}")
    if found.winners != game.winners:
        problems.append(f"winners {found.winners}, not {game.winners}")
    if found.log_sha256 != game.log_sha256:
        problems.append("the event log differs from the recorded one")
    return problems
