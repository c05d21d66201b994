"""Rule errors: each names the broken rule in a player's words.

``decide`` raises one of these; a service turns it into a rejection without appending anything.
``code`` is a stable machine-readable name for frontends.
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
    """The command does not fit the current step of the turn."""

    code = "wrong_phase"


class GameOver(RuleError):
    code = "game_over"


class NotInHand(RuleError):
    code = "not_in_hand"


class IllegalPlacement(RuleError):
    """A domino placement breaks the brook rules."""

    code = "illegal_placement"


class IllegalPlant(RuleError):
    code = "illegal_plant"


class NotEnoughClouds(RuleError):
    code = "not_enough_clouds"


class IllegalCloudAction(RuleError):
    code = "illegal_cloud_action"


class IllegalMushroom(RuleError):
    code = "illegal_mushroom"


class SeedMismatch(RuleError):
    """The revealed seed does not match the commitment made at creation."""

    code = "seed_mismatch"
