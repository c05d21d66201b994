"""The score projection: each seat's running score with a breakdown by source.

Built from the game's ``points_awarded`` (Renature's ``renature.events.points_awarded``), the
single definition of who got which points for what, so the model's totals always equal the
scores of the folded state. Each award is
kept (version, points, reason) so a player can see where every point came from. Each seat's
total, breakdown and awards are kept up to date from every event's awards (`SeatTally`), so a
model is rendered without walking every award of the game again
(`tests/unit/test_score_projection.py` compares it with a fresh render after every event).

Key: ``<prefix>:{pNN}:score:<game_id>``, a hash ``{version, model}`` (see `runner`).
"""

from __future__ import annotations

import msgspec

from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.projectors.folds import Evolving
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


class SeatTally(msgspec.Struct, frozen=True):
    """One seat's running score as the events gave it: the total, by source (in the order the
    sources first scored), and every award in order."""

    score: int = 0
    breakdown: dict[str, int] = msgspec.field(default_factory=dict)
    awards: tuple[AwardLine, ...] = ()

    def plus(self, award: AwardLine) -> SeatTally:
        breakdown = dict(self.breakdown)  # a fold is a value: the old one stays as it was
        breakdown[award.source] = breakdown.get(award.source, 0) + award.points
        return SeatTally(self.score + award.points, breakdown, (*self.awards, award))


NOTHING_YET = SeatTally()


class ScoreFold(msgspec.Struct, frozen=True):
    """The folded state (names, colours, phase) and each seat's tally so far, updated from
    each event's awards (a render never walks the awards again)."""

    state: HostedState
    tallies: dict[int, SeatTally] = msgspec.field(default_factory=dict)


class ScoreProjection(Evolving[ScoreFold]):
    """Fold = state plus tallies; model = `ScoreModel`."""

    name = "score"
    group = SCORE_GROUP

    def state_of(self, fold: ScoreFold) -> HostedState:
        return fold.state

    def apply_evolved(
        self, game: HostedGame, fold: ScoreFold | None, event: Event, state: HostedState
    ) -> ScoreFold:
        tallies = {} if fold is None else fold.tallies
        awards = game.points_awarded(event)
        if awards:
            tallies = dict(tallies)
            for award in awards:
                line = AwardLine(
                    award.seat, event.version, award.points, award.source, award.reason
                )
                tallies[award.seat] = tallies.get(award.seat, NOTHING_YET).plus(line)
        return ScoreFold(state, tallies)

    def version(self, fold: ScoreFold) -> int:
        return fold.state.version

    def render(self, game: HostedGame, fold: ScoreFold) -> bytes:
        return json_encoder.encode(score_model(fold, game))


def score_model(fold: ScoreFold, game: HostedGame) -> ScoreModel:
    table = game.table(fold.state)
    seats = []
    for seat_no, (name, colour) in enumerate(zip(table.names, table.colours, strict=True)):
        tally = fold.tallies.get(seat_no, NOTHING_YET)
        seats.append(
            SeatScore(
                seat=seat_no,
                name=name,
                colour=colour,
                score=tally.score,
                breakdown=tally.breakdown,
                awards=list(tally.awards),
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
