"""Rule errors: each names the broken rule in a player's words (``code`` for machines). The
errors every game has come from ``gameplatform.errors``; these are Goofspiel's own."""

from __future__ import annotations

from gameplatform.errors import (
    GameAlreadyExists,
    GameNotFound,
    InvalidCommand,
    NotYourTurn,
    RuleError,
    WrongPhase,
)

__all__ = [
    "AlreadyBid",
    "CardNotInHand",
    "GameAlreadyExists",
    "GameNotFound",
    "InvalidCommand",
    "NotYourTurn",
    "RuleError",
    "SeedMismatch",
    "WrongPhase",
]


class AlreadyBid(RuleError):
    code = "already_bid"


class CardNotInHand(RuleError):
    code = "card_not_in_hand"


class SeedMismatch(RuleError):
    code = "seed_mismatch"
