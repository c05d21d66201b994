"""What the search bot (``mcts``, `gameplatform.search`) values in Renaissance: its heuristic.

The search values each new node by the heuristic alone (no rollouts: see ``BUDGET``), so the
heuristic must see what a move changes. ``bots.prospects`` counted a Phase 2 hand at its full
penalty whatever the board: a marker move, which decides whether pieces can still be laid
(a piece must touch one of its owner's markers), looked like every other, and the bot lost in
Phase 2 the sets it had won in Phase 1 (seen in games as seat 0, which took more pieces in
Phase 1 and then laid fewer of them). Here a piece in hand counts a share of its penalty by
how likely it still is to be laid:

- ``PLACEABLE_RISK`` of it if it can be laid now (a free placement touching its owner's marker);
- ``FREE_RISK`` if it fits on free squares but touches none of its owner's markers yet;
- all of it if it fits nowhere: the board only fills up, so it will stay in hand.

Phase 1 and the set-up are valued as ``bots.prospects`` does: score plus the Phase 1 points of
the pieces acquired so far.
"""

from __future__ import annotations

from gameplatform import search
from renaissance.bots import PHASE1, prospects
from renaissance.components import components, neighbours
from renaissance.placement import free_placements
from renaissance.state import GameState

PLACEABLE_RISK = 0.25
"""The share of a piece's penalty counted while it can be laid now."""
FREE_RISK = 0.6
"""The share counted while it fits on free squares away from its owner's markers."""
EVALUATION_SCALE = 4.0
"""Points ahead that count as clearly ahead (a hand of two triominoes is worth 2)."""

BUDGET = search.Budget(iterations=200, rollout_depth=0, rollout_policy="random", widening=100.0)
"""A move of the greedy bot costs milliseconds here (it plays every action out), too much for
rollouts: the search values each new node by the heuristic alone and looks wider instead."""


def hand_risk(state: GameState, colour: int) -> float:
    """The penalty ``colour``'s hand is expected to cost, each piece weighted as above."""
    own = {square for square, marker in enumerate(state.markers) if marker == colour}
    beside = {n for square in own for n in neighbours(square)}
    pieces = components().pieces
    risk = 0.0
    for piece in state.hands[colour]:
        share = 1.0
        for squares in free_placements(state, piece):
            if beside.intersection(squares):
                share = PLACEABLE_RISK
                break
            share = FREE_RISK
        risk += share * pieces[piece].size
    return risk


def search_prospects(state: GameState) -> list[float]:
    """Each seat's points as the set would likely count them (see the module docstring)."""
    if state.phase in PHASE1 or state.phase in ("distribution", "finished"):
        return prospects(state)
    return [state.scores[seat] - hand_risk(state, state.colour_of(seat)) for seat in (0, 1)]


def evaluate(state: GameState) -> list[float]:
    """The search's value of each seat in [0, 1]: ``search_prospects`` as margins."""
    return search.margin_values(search_prospects(state), EVALUATION_SCALE)
