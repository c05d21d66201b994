"""The rules of Renaissance, assembled: ``RULES``, the platform's ``Rulebook`` over the deciders
(``deciders.py``, and the steps of the game in ``seating.py``, ``setup.py``, ``phase1.py``,
``proposals.py``, ``janken.py``, ``phase2.py``, ``sets.py``) and ``evolve`` (``evolve.py``).
``decide`` validates a command and returns events, ``evolve`` applies an event without checks,
``legal_actions`` (``legal_moves.py``) lists every command a seat may give now.

The parts of the game live beside it: ``placement.py`` (what the position allows),
``scoring.py``, ``position.py`` (small reads and writes of a position), ``turns.py`` (the
checks every decider shares).

Quotes in docstrings are from the English rule text (shared seeds, ``renaissance-rules-en``);
"ruling N" points at docs/rules-renaissance.md.
"""

from __future__ import annotations

from gameplatform import execution
from renaissance import commands as c
from renaissance import events as e
from renaissance.deciders import DECIDERS
from renaissance.errors import RuleError
from renaissance.evolve import evolve
from renaissance.legal_moves import legal_actions
from renaissance.seating import create
from renaissance.state import GameState

__all__ = ["RULES", "check", "decide", "evolve", "execute", "legal_actions"]

RULES: execution.Rulebook[GameState, c.Command, e.Event] = execution.Rulebook(
    creation=c.CreateGame, create=create, deciders=DECIDERS, evolve=evolve, cause=e.Cause
)
execute = RULES.execute
"""Decide a command; its events and the state after them."""
decide = RULES.decide
"""Validate a command against a state; its events, or a ``RuleError``."""


def check(state: GameState | None, command: c.Command) -> RuleError | None:
    """The rule error ``command`` would raise, or None when it is legal."""
    try:
        decide(state, command)
    except RuleError as err:
        return err
    return None
