"""Rule errors: each names the broken rule in a player's words (``code`` for machines). The
errors every game shares (`RuleError`, the base, among them) are the platform's
(`gameplatform.errors`), re-exported here; Renaissance's own subclass `RuleError`."""

from __future__ import annotations

from gameplatform.errors import (
    ClockRunning,
    GameOver,
    InvalidCommand,
    NotYourTurn,
    RuleError,
    WrongPhase,
)

__all__ = [  # the platform's errors that Renaissance's rules raise, and its own
    "ClockRunning",
    "GameOver",
    "IllegalMarker",
    "IllegalMove",
    "IllegalPreparation",
    "IllegalProposal",
    "IllegalPush",
    "InvalidCommand",
    "NotYourTurn",
    "PieceDoesNotFit",
    "RelocationRule",
    "RuleError",
    "WrongPhase",
]


class PieceDoesNotFit(RuleError):
    """A polyomino placement breaks the placement rules of its step (set-up or Phase 2)."""

    code = "piece_does_not_fit"


class RelocationRule(RuleError):
    """The set-up's relocation ("When it turns out that some pieces are left and do not fit
    in ...") is broken: lifting when nothing needs it, lifting a protected piece, placing a
    piece lifted this turn, or placing so that the rest no longer fits."""

    code = "relocation_rule"


class IllegalMarker(RuleError):
    """A marker placement breaks the "Instructions in placing Markers"."""

    code = "illegal_marker"


class IllegalPush(RuleError):
    """A push-in breaks its rule."""

    code = "illegal_push"


class IllegalProposal(RuleError):
    """An end-of-Phase-1 agreement breaks ruling 6."""

    code = "illegal_proposal"


class IllegalPreparation(RuleError):
    """A Phase 2 preparation placement touches another marker or monomino by a side."""

    code = "illegal_preparation"


class IllegalMove(RuleError):
    """A Phase 2 marker move breaks "Relocation of Markers" (the no-undo rule among them)."""

    code = "illegal_move"


class IllegalChoice(RuleError):
    """Play only Phase 2: a Janken hand shown twice, or a piece that is not left to distribute."""

    code = "illegal_choice"
