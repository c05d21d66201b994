"""The score projection: each seat's running score with a breakdown by source.

Built from the game's ``points_awarded`` (Renature's ``renature.events.points_awarded``), the
single definition of who got which points for what, so the model's totals always equal the
scores of the folded state. Each award is
kept (version, points, reason) so a player can see where every point came from.

Key: ``<prefix>:{pNN}:score:<game_id>``, a hash ``{version, model}`` (see `runner`).
"""

from __future__ import annotations

import msgspec

from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.projectors.projector_runner import json_encoder
from gameserver.runtime.bus import SCORE_GROUP


class AwardLine(msgspec.Struct, frozen=True):
    """One award to one seat: which event (version), how much, why, and its source."""

    seat: int
    version: int
    points: int
    source: str
    reason: str


class SeatScore(msgspec.Struct, frozen=True):
    seat: int
    name: str | None
    colour: str
    score: int
    breakdown: dict[str, int]
    awards: list[AwardLine]


class ScoreModel(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    phase: str
    seats: list[SeatScore]
    ranking: list[int]
    winners: list[int]


class ScoreFold(msgspec.Struct, frozen=True):
    """The folded state (names, colours, phase) and every award so far, in order."""

    state: HostedState
    awards: tuple[AwardLine, ...] = ()


class ScoreProjection:
    """Fold = state plus awards; model = `ScoreModel`."""

    name = "score"
    group = SCORE_GROUP

    def apply(self, game: HostedGame, fold: ScoreFold | None, event: Event) -> ScoreFold:
        state = game.evolve(None if fold is None else fold.state, event)
        new = tuple(
            AwardLine(award.seat, event.version, award.points, award.source, award.reason)
            for award in game.points_awarded(event)
        )
        return ScoreFold(state, (fold.awards if fold else ()) + new)

    def version(self, fold: ScoreFold) -> int:
        return fold.state.version

    def render(self, game: HostedGame, fold: ScoreFold) -> bytes:
        return json_encoder.encode(score_model(fold, game))


def score_model(fold: ScoreFold, game: HostedGame) -> ScoreModel:
    table = game.table(fold.state)
    seats = []
    for seat_no, (name, colour) in enumerate(zip(table.names, table.colours, strict=True)):
        awards = [award for award in fold.awards if award.seat == seat_no]
        breakdown: dict[str, int] = {}
        for award in awards:
            breakdown[award.source] = breakdown.get(award.source, 0) + award.points
        seats.append(
            SeatScore(
                seat=seat_no,
                name=name,
                colour=colour,
                score=sum(award.points for award in awards),
                breakdown=breakdown,
                awards=awards,
            )
        )
    return ScoreModel(
        game_id=table.game_id,
        version=table.version,
        phase=table.phase,
        seats=seats,
        ranking=table.ranking,
        winners=table.winners,
    )
