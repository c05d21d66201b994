"""Projectors: partition feeds in, per-game read models out (board and score).

See `runner` for the consumption and write protocol, `board` and `score` for the models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from renature_services.projectors.board import BoardProjection
from renature_services.projectors.runner import Projection, Projector, create_projector, model_key
from renature_services.projectors.score import ScoreProjection

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
