"""The score projection: each seat's running score with a breakdown by source.

Built from ``renature.events.points_awarded``, the single definition of who got which points
for what, so the model's totals always equal the scores of the folded state. Each award is
kept (version, points, reason) so a player can see where every point came from.

Key: ``<prefix>:{pNN}:score:<game_id>``, a hash ``{version, model}`` (see `runner`).
"""

from __future__ import annotations

import msgspec

from renature import events as e
from renature.components import COLOURS
from renature.rules import evolve
from renature.state import GameState
from renature_services.bus import SCORE_GROUP
from renature_services.projectors.runner import json_encoder

SOURCES: dict[type[e.Event], str] = {
    e.GameStarted: "start",
    e.PlantPlaced: "plants",
    e.AreaScored: "areas",
    e.CloudsScored: "clouds",
    e.PlantsPenalised: "plants_left",
    e.TokensRevealed: "token_backs",
}
"""The source of the points of each scoring event (final area scorings: ``final_areas``)."""


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

    state: GameState
    awards: tuple[AwardLine, ...] = ()


def source_of(event: e.Event) -> str:
    if isinstance(event, e.AreaScored) and event.final:
        return "final_areas"
    return SOURCES.get(type(event), type(event).__name__)


class ScoreProjection:
    """Fold = state plus awards; model = `ScoreModel`."""

    name = "score"
    group = SCORE_GROUP

    def apply(self, fold: ScoreFold | None, event: e.Event) -> ScoreFold:
        state = evolve(None if fold is None else fold.state, event)
        new = tuple(
            AwardLine(seat, event.version, points, source_of(event), reason)
            for seat, points, reason in e.points_awarded(event)
        )
        return ScoreFold(state, (fold.awards if fold else ()) + new)

    def version(self, fold: ScoreFold) -> int:
        return fold.state.version

    def render(self, fold: ScoreFold) -> bytes:
        return json_encoder.encode(score_model(fold))


def score_model(fold: ScoreFold) -> ScoreModel:
    state = fold.state
    seats = []
    for seat_no, seat in enumerate(state.seats):
        awards = [award for award in fold.awards if award.seat == seat_no]
        breakdown: dict[str, int] = {}
        for award in awards:
            breakdown[award.source] = breakdown.get(award.source, 0) + award.points
        seats.append(
            SeatScore(
                seat=seat_no,
                name=seat.name,
                colour=COLOURS[seat.colour],
                score=sum(award.points for award in awards),
                breakdown=breakdown,
                awards=awards,
            )
        )
    return ScoreModel(
        game_id=state.game_id,
        version=state.version,
        phase=state.phase,
        seats=seats,
        ranking=list(state.result),
        winners=list(state.winners),
    )
