"""Rule errors: each names the broken rule in a player's words (``code`` for machines). The
errors every game has come from ``gameplatform.errors``; these are Goofspiel's own."""

from __future__ import annotations

from gameplatform.errors import (
    ClockRunning,
    GameAlreadyExists,
    GameNotFound,
    GameOver,
    InvalidCommand,
    NotYourTurn,
    RuleError,
    WrongPhase,
)

__all__ = [
    "AlreadyBid",
    "CardNotInHand",
    "ClockRunning",
    "GameAlreadyExists",
    "GameNotFound",
    "GameOver",
    "InvalidCommand",
    "NotPlayedByBot",
    "NotYourTurn",
    "PlayedByBot",
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


class NotPlayedByBot(RuleError):
    """A seat taken back that no bot plays (it never timed out, or was taken back already)."""

    code = "not_played_by_bot"


class PlayedByBot(RuleError):
    """A bid for a seat a bot plays since its timeout: its player takes it back first."""

    code = "played_by_bot"
