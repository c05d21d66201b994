"""The end of the game (End of the game, ruling 11): the seed revealed, the final area
scoring, each seat's clouds, plants left and tokens, and the result."""

from __future__ import annotations

from renature import commands as c
from renature import events as e
from renature import seating
from renature.areas import live_areas
from renature.components import NEUTRAL, plant_code, plant_value
from renature.deal import commitment
from renature.errors import SeedMismatch, WrongPhase
from renature.position import plant_label
from renature.scoring import tiebreak_keys
from renature.state import GameState
from renature.turns import Batch, score_area


def finish(b: Batch, cmd: c.FinishGame) -> None:
    """Final scoring (End of the game, ruling 11)."""
    s = b.state
    if s.phase != "final_scoring":
        raise WrongPhase("The game can only be finished when nobody has any dominoes left.")
    if commitment(cmd.seed, cmd.salt) != s.commitment:
        raise SeedMismatch("The revealed seed does not match the commitment made at creation.")
    if s.board.scoring == "on_closing":
        for area, token in enumerate(s.area_tokens):
            if token is not None:
                score_area(b, area, closer=None, final=True)
    else:
        for area in live_areas(s):
            score_area(b, area, closer=None, final=True)
    for seat_no in range(s.players):
        _score_seat_at_the_end(b, seat_no)
    scores, tiebreak, ranking, winners = _result(b.state)
    b.emit(
        e.GameEnded(
            game_id=b.game_id,
            version=b.next_version,
            seed=cmd.seed,
            scores=scores,
            tiebreak=tiebreak,
            ranking=ranking,
            winners=winners,
            salt=cmd.salt,
        )
    )


def _score_seat_at_the_end(b: Batch, seat_no: int) -> None:
    """A seat's clouds, the plants left on its board and its tokens' backs (ruling 11)."""
    seat = b.state.seats[seat_no]
    b.emit(
        e.CloudsScored(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat_no,
            clouds=seat.clouds,
            points=seat.clouds,
        )
    )
    left = [
        plant_code(seat.colour if slot < 4 else NEUTRAL, slot % 4)
        for slot, count in enumerate(seat.plants)
        for _ in range(count)
    ]
    b.emit(
        e.PlantsPenalised(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat_no,
            plants=[plant_label(p) for p in left],
            points=-sum(plant_value(p) for p in left),
        )
    )
    if b.state.board.tokens:
        backs = [b.state.board.token(t).back for t in seat.tokens]
        b.emit(
            e.TokensRevealed(
                game_id=b.game_id,
                version=b.next_version,
                seat=seat_no,
                tokens=list(seat.tokens),
                backs=backs,
                points=sum(backs),
            )
        )


def _result(final: GameState) -> tuple[list[int], list[list[int]], list[int], list[int]]:
    """Scores, tie-break keys, ranking and winners of a finished game."""
    scores = [seat.score for seat in final.seats]
    tiebreak = tiebreak_keys(final)
    out = seating.out_of_game(final)  # resigned and removed seats rank last, never win
    ranking = sorted(
        range(final.players), key=lambda p: (p in out, -scores[p], [-k for k in tiebreak[p]], p)
    )
    best = ranking[0]
    winners = [
        p
        for p in ranking
        if p not in out and (scores[p], tiebreak[p]) == (scores[best], tiebreak[best])
    ]
    return scores, tiebreak, ranking, winners
