"""The board projection: what a spectator sees of each game.

The model is exactly ``renature.view.view(state, None)``, the spectator view of the rules
core: the placed dominoes, plants, areas with their colour totals and what each would score
now, joker, clouds, mushrooms, the seats' public counters, and the seed once revealed. Building
it only through the spectator view is what keeps hands, reserves and token backs out of the
read model.

Key: ``<prefix>:{pNN}:board:<game_id>``, a hash ``{version, model}`` (see `runner`).
"""

from __future__ import annotations

from renature import events as e
from renature.rules import evolve
from renature.state import GameState
from renature.view import GameView, view
from renature_services.bus import BOARD_GROUP
from renature_services.projectors.runner import json_encoder

BoardModel = GameView
"""The stored board model: the spectator ``GameView`` (``viewer`` is always null)."""


class BoardProjection:
    """Fold = the game state; model = its spectator view."""

    name = "board"
    group = BOARD_GROUP

    def apply(self, fold: GameState | None, event: e.Event) -> GameState:
        return evolve(fold, event)

    def version(self, fold: GameState) -> int:
        return fold.version

    def render(self, fold: GameState) -> bytes:
        return json_encoder.encode(board_model(fold))


def board_model(state: GameState) -> BoardModel:
    """The board model of a state (also what tests compare a fresh replay against)."""
    return view(state, None)
