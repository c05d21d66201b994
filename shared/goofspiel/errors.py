"""Rule errors: each names the broken rule in a player's words (``code`` for machines)."""

from __future__ import annotations


class RuleError(Exception):
    code = "rule_broken"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidCommand(RuleError):
    code = "invalid_command"


class GameNotFound(RuleError):
    code = "game_not_found"


class GameAlreadyExists(RuleError):
    code = "game_exists"


class WrongPhase(RuleError):
    """The command does not fit the current step of the game."""

    code = "wrong_phase"


class NotYourTurn(RuleError):
    code = "not_your_turn"


class AlreadyBid(RuleError):
    code = "already_bid"


class CardNotInHand(RuleError):
    code = "card_not_in_hand"


class SeedMismatch(RuleError):
    code = "seed_mismatch"
