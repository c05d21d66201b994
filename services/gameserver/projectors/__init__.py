"""Projectors: partition feeds in, per-game read models out (board and score, apart or
folded together: ``models``).

See `projector_runner` for the consumption and write protocol, `board_projection` and
`score_projection` for the models, `together` for projections folded as one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gameserver.projectors.board_projection import BoardProjection
from gameserver.projectors.projector_runner import (
    Projection,
    Projector,
    Together,
    create_projector,
    model_key,
)
from gameserver.projectors.score_projection import ScoreProjection
from gameserver.runtime.bus import MODELS_GROUP


def board_and_score() -> Together:
    """The board and score projections as one consumer (``renature serve models``)."""
    return Together((BoardProjection(), ScoreProjection()), "models", MODELS_GROUP)


# Any: each projection folds a type of its own (the board a game's state, the score a ScoreFold).
PROJECTIONS: dict[str, Callable[[], Projection[Any] | Together]] = {
    "board": BoardProjection,
    "score": ScoreProjection,
    "models": board_and_score,
}

__all__ = [
    "PROJECTIONS",
    "BoardProjection",
    "Projection",
    "Projector",
    "ScoreProjection",
    "Together",
    "board_and_score",
    "create_projector",
    "model_key",
]
