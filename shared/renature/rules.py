"""The rules of Renature, assembled: ``RULES``, the platform's ``Rulebook`` over the deciders
(``deciders.py``, with ``clouds.py``, ``mushrooms.py``, ``ending.py`` and the seats' own in
``seating.py``) and ``evolve`` (``evolve.py``). ``decide`` validates a command and returns
events, ``evolve`` applies an event without checks, ``legal_actions`` (``legal_moves.py``)
lists every command a seat may give now.

The parts of the game live beside it: ``placement.py`` (where a domino, a plant or a mushroom
may go), ``areas.py`` (areas and their closing), ``scoring.py``, ``position.py`` (small reads
and writes of a position), ``turns.py`` (the checks and the end of a turn).
"""

from __future__ import annotations

from gameplatform import execution
from renature import commands as c
from renature import events as e
from renature import seating
from renature.deciders import DECIDERS, create
from renature.evolve import evolve
from renature.legal_moves import legal_actions
from renature.state import GameState
from renature.turns import Batch

__all__ = ["RULES", "Batch", "decide", "evolve", "execute", "legal_actions"]

RULES: execution.Rulebook[GameState, c.Command, e.Event] = execution.Rulebook(
    creation=c.CreateGame,
    create=create,
    deciders=DECIDERS,
    evolve=evolve,
    cause=lambda command, command_id, time: e.Cause(e.public_command(command), command_id, time),
    after=lambda batch: seating.play_on(batch, DECIDERS),  # timed-out seats played on by a bot
)
execute = RULES.execute
"""Decide a command; its events and the state after them (``command_id`` and ``time`` are
provenance given by the caller, recorded in the first event's ``cause``)."""
decide = RULES.decide
"""Validate a command against a state; its events, or a ``RuleError``."""
