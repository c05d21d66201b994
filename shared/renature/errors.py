"""Rule errors: each names the broken rule in a player's words.

The errors every game shares (`RuleError`, the base, among them) are the platform's
(`gameplatform.errors`), re-exported here; Renature's own subclass `RuleError`. ``code`` is a
stable machine-readable name, part of the protocol.
"""

from __future__ import annotations

from gameplatform.errors import GameAlreadyExists as GameAlreadyExists
from gameplatform.errors import GameNotFound as GameNotFound
from gameplatform.errors import GameOver as GameOver
from gameplatform.errors import InvalidCommand as InvalidCommand
from gameplatform.errors import NotYourTurn as NotYourTurn
from gameplatform.errors import RuleError as RuleError
from gameplatform.errors import WrongPhase as WrongPhase


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
