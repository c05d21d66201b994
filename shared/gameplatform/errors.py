"""Rule errors: ``decide`` raises one, naming the broken rule in a player's words; a service
turns it into a rejection without appending anything. ``code`` is a stable machine-readable
name, part of the protocol (frontends and the HTTP answers read it).

The errors every game shares live here; a game's own errors subclass `RuleError` in its
``errors`` module (which re-exports these).
"""

from __future__ import annotations


class RuleError(Exception):
    code = "rule_broken"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidCommand(RuleError):
    """The command is malformed or names something that does not exist."""

    code = "invalid_command"


class GameNotFound(RuleError):
    code = "game_not_found"


class GameAlreadyExists(RuleError):
    code = "game_exists"


class NotYourTurn(RuleError):
    code = "not_your_turn"


class WrongPhase(RuleError):
    """The command does not fit the current step of the game."""

    code = "wrong_phase"


class GameOver(RuleError):
    code = "game_over"


class ClockRunning(RuleError):
    """A timeout claimed before the seat's time ran out, or of a seat whose time does not run."""

    code = "clock_running"
