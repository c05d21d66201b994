"""Projectors: partition feeds in, per-game read models out (board and score).

See `projector_runner` for the consumption and write protocol, `board_projection` and
`score_projection` for the models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gameserver.projectors.board_projection import BoardProjection
from gameserver.projectors.projector_runner import (
    Projection,
    Projector,
    create_projector,
    model_key,
)
from gameserver.projectors.score_projection import ScoreProjection

# Any: each projection folds a type of its own (the board a game's state, the score a ScoreFold).
PROJECTIONS: dict[str, Callable[[], Projection[Any]]] = {
    "board": BoardProjection,
    "score": ScoreProjection,
}

__all__ = [
    "PROJECTIONS",
    "BoardProjection",
    "Projection",
    "Projector",
    "ScoreProjection",
    "create_projector",
    "model_key",
]
