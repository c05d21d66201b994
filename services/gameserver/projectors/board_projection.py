"""The board projection: what a spectator sees of each game.

The model is exactly the game's spectator view, ``view(state, None)`` of its rules core (for
Renature ``renature.view.view``: the placed dominoes, plants, areas with their colour totals and
what each would score now, joker, clouds, mushrooms, the seats' public counters, and the seed
once revealed; for Renaissance the open board). Building it only through the spectator view is
what keeps hands, reserves and token backs out of the read model.

Key: ``<prefix>:{pNN}:board:<game_id>``, a hash ``{version, model}`` (see `runner`).
"""

from __future__ import annotations

import msgspec

from gameplatform import get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameplatform.registry import DEFAULT_GAME
from gameserver.projectors.folds import Evolving
from gameserver.projectors.projector_runner import json_encoder
from gameserver.runtime.bus import BOARD_GROUP


class BoardProjection(Evolving[HostedState]):
    """Fold = the game state; model = its spectator view."""

    name = "board"
    group = BOARD_GROUP

    def state_of(self, fold: HostedState) -> HostedState:
        return fold

    def apply_evolved(
        self, game: HostedGame, fold: HostedState | None, event: Event, state: HostedState
    ) -> HostedState:
        return state

    def version(self, fold: HostedState) -> int:
        return fold.version

    def render(self, game: HostedGame, fold: HostedState) -> bytes:
        return json_encoder.encode(board_model(fold, game))


def board_model(state: HostedState, game: HostedGame | None = None) -> msgspec.Struct:
    """The board model of a state (also what tests compare a fresh replay against): the
    spectator view of ``game`` (the default game when not named)."""
    return (game or get_game(DEFAULT_GAME)).view(state, None)
