"""The score projection is kept up to date from each event's awards (`SeatTally`): after every
event of whole games of every hosted game its model is exactly the model rendered afresh from
every award so far, as the projection once rendered it."""

from __future__ import annotations

from typing import Any

import pytest

from gameplatform import game_names, get_game
from gameserver.projectors import BoardProjection, board_and_score
from gameserver.projectors.projector_runner import json_encoder
from gameserver.projectors.score_projection import (
    AwardLine,
    ScoreFold,
    ScoreModel,
    ScoreProjection,
    SeatScore,
    score_model,
)
from support.hosting import hosted


def fresh_model(game: Any, state: Any, events: list[Any]) -> ScoreModel:
    """The model from scratch: every award of ``events`` walked again for every seat."""
    awards = [
        AwardLine(award.seat, event.version, award.points, award.source, award.reason)
        for event in events
        for award in game.points_awarded(event)
    ]
    table = game.table(state)
    seats = []
    for seat, (name, colour) in enumerate(zip(table.names, table.colours, strict=True)):
        own = [award for award in awards if award.seat == seat]
        breakdown: dict[str, int] = {}
        for award in own:
            breakdown[award.source] = breakdown.get(award.source, 0) + award.points
        score = sum(award.points for award in own)
        seats.append(SeatScore(seat, name, colour, score, breakdown, own))
    return ScoreModel(
        table.game_id, table.version, table.phase, seats, table.ranking, table.winners
    )


@pytest.mark.parametrize("name", hosted(game_names()))
@pytest.mark.parametrize("players", ["fewest", "most"])
def test_the_kept_scores_equal_a_fresh_render_after_every_event(name: str, players: str) -> None:
    game = get_game(name)
    count = game.player_counts[0] if players == "fewest" else game.player_counts[-1]
    quick = [bot for bot in game.bot_names if bot != "mcts"]  # the search bot takes its time
    bots = [quick[seat % len(quick)] for seat in range(count)]
    projection = ScoreProjection()
    scored = 0
    for seed in ("score-a", "score-b"):
        events, state, _ = game.simulate(f"{seed}-{count}", bots)
        fold: ScoreFold | None = None
        for number, event in enumerate(events, start=1):
            fold = projection.apply(game, fold, event)
            fresh = fresh_model(game, fold.state, events[:number])
            assert score_model(fold, game) == fresh, (name, event.version)
            assert projection.render(game, fold) == json_encoder.encode(fresh)
        assert fold is not None
        assert fold.state == state
        final = score_model(fold, game)
        assert [seat.score for seat in final.seats] == list(game.table(state).scores)
        scored += sum(seat.score for seat in final.seats)
    assert scored > 0  # the games scored: the awards were compared, not only empty lists


@pytest.mark.parametrize("name", hosted(game_names()))
def test_models_folded_together_evolve_each_event_once_and_fold_what_each_folds_alone(
    name: str,
) -> None:
    """``serve models`` folds the board and the score together: the game's state is evolved
    once per event for both (it was twice, a few per cent of the models process), and each
    fold is what its projection folds alone."""
    game = get_game(name)
    quick = [bot for bot in game.bot_names if bot != "mcts"]
    bots = [quick[seat % len(quick)] for seat in range(game.player_counts[-1])]
    events, state, _ = game.simulate("together-once", bots)
    evolved = 0

    class Counting:
        def __getattr__(self, attribute: str) -> Any:
            return getattr(game, attribute)

        def evolve(self, state: Any, event: Any) -> Any:
            nonlocal evolved
            evolved += 1
            return game.evolve(state, event)

    together, board, score = board_and_score(), BoardProjection(), ScoreProjection()
    folded: Any = None
    alone: tuple[Any, Any] = (None, None)
    for event in events:
        folded = together.apply(Counting(), folded, event)
        alone = (board.apply(game, alone[0], event), score.apply(game, alone[1], event))
        assert folded == alone
    assert evolved == len(events)
    assert folded[0] == state
    assert together.render_each(game, folded) == (
        board.render(game, alone[0]),
        score.render(game, alone[1]),
    )
