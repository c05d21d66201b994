"""Projections folded together: one consumer group, one read of the feeds, one fold pass and
one write script per game for several read models (``renature serve models``: the board and
score models in one process).

Each event of a batch wakes one process instead of one per projection, and each batch costs
one ``XREADGROUP`` and one script per game instead of one of each per projection: at one game,
where every batch is one move, that per-batch cost is most of a projector's CPU. The models of
a game are written at one version by one script (`read_models.WRITE_MODEL_LUA`), each only
forward, so projections folded together and projectors of the same models running apart (their
own groups) may run side by side: whichever writes a version first, the other keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gameplatform.chain import Event
from gameplatform.interface import HostedGame
from gameserver.projectors.folds import Projection

Folded = tuple[Any, ...]
"""One fold per projection, in order (each projection folds a type of its own)."""


class Together:
    """The projections ``parts`` as one fold (a `folds.Folding`): a tuple of their folds,
    rendered to one model each (named by each part). A projector of one projection folds it
    as a `Together` of one."""

    def __init__(
        self, parts: Sequence[Projection[Any]], name: str | None = None, group: str | None = None
    ) -> None:
        if not parts:
            raise ValueError("no projection to fold")
        self.parts = tuple(parts)
        self.names = tuple(part.name for part in self.parts)
        self.name = name or "+".join(self.names)
        """Log lines and the service's name (one part: its own)."""
        self.group = group or self.parts[0].group
        """The consumer group on the partition feeds (one part: its own)."""

    def apply(self, game: HostedGame, fold: Folded | None, event: Event) -> Folded:
        """Every part's fold after ``event``, the game's state evolved once for them all (each
        part folds the same events, so each holds the same state)."""
        folds = (None,) * len(self.parts) if fold is None else fold
        state = game.evolve(None if fold is None else self.parts[0].state_of(fold[0]), event)
        return tuple(
            part.apply_evolved(game, each, event, state)
            for part, each in zip(self.parts, folds, strict=True)
        )

    def render_each(self, game: HostedGame, fold: Folded) -> tuple[bytes, ...]:
        """Every part's model, in order (the names' order)."""
        return tuple(part.render(game, each) for part, each in zip(self.parts, fold, strict=True))
