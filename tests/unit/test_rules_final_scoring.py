"""The end of the game and the final scoring (English online rules, "End of the game"; rulings
page, ruling 11): areas still holding their token are scored and the token goes back to the box;
+1 per cloud; minus the value of every plant left on one's player board; plus the backs of the
collected area tokens. Most points wins; ties go to more area tokens; still tied, shared.

Back values of the tokens are read from the board data (they are reconstructions, see the rulings
page), so the tests hold for any corrected values.
"""

from __future__ import annotations

from collections.abc import Iterable

from helpers import area, finish, new_game, of_type, player_board, with_plants, with_seat
from msgspec.structs import replace

from renature import events as e
from renature.state import GameState

MARY, PAUL, FRANK = 0, 1, 2


def game_over(keep: tuple[str, ...] = ()) -> GameState:
    """A 3-player game where nobody holds a domino any more, waiting for the final scoring.
    Every area token has been taken except in the areas ``keep``; every player board is empty of
    plants and clouds, and every seat has 0 points, unless a test says otherwise."""
    state = new_game()
    ids = state.board.area_ids
    tokens = tuple(t if ids[i] in keep else None for i, t in enumerate(state.area_tokens))
    seats = tuple(
        replace(seat, hand=(), reserve=(), plants=player_board(), clouds=0, score=0)
        for seat in state.seats
    )
    return replace(state, phase="final_scoring", current=-1, area_tokens=tokens, seats=seats)


def tokens_of(state: GameState, *area_ids: str) -> tuple[str, ...]:
    """The tokens dealt to these areas (as if collected by closing them)."""
    dealt = new_game().area_tokens
    tokens = tuple(token for a in area_ids if (token := dealt[area(state, a)]) is not None)
    assert len(tokens) == len(area_ids), "a new game has a token on every area"
    return tokens


def backs(state: GameState, tokens: Iterable[str]) -> int:
    return sum(state.board.token(t).back for t in tokens)


def test_final_scoring_areas_clouds_plants_left_and_token_backs() -> None:
    state = game_over(keep=("N",))
    state = with_plants(state, {(5, 9): "orange bush"})  # Mary alone in area N: 4 + 2
    mary_tokens = tokens_of(state, "H", "A")
    state = with_seat(
        state,
        MARY,
        score=10,
        clouds=4,
        plants=player_board(turf=2, neutral_oak=1),  # 1 + 1 + 4 = 6 left
        tokens=mary_tokens,
    )
    state = with_seat(state, PAUL, score=3, clouds=6)
    state = with_seat(state, FRANK, score=7)
    n_token = state.area_tokens[area(state, "N")]

    events, after = finish(state)

    (scored,) = of_type(events, e.AreaScored)
    assert (scored.area, scored.final, scored.seat) == ("N", True, None)
    assert [(a.seat, a.points) for a in scored.awards] == [(MARY, 6)]
    clouds = {ev.seat: ev.points for ev in of_type(events, e.CloudsScored)}
    assert clouds == {MARY: 4, PAUL: 6, FRANK: 0}
    plants = {ev.seat: ev.points for ev in of_type(events, e.PlantsPenalised)}
    assert plants == {MARY: -6, PAUL: 0, FRANK: 0}
    revealed = {ev.seat: ev.points for ev in of_type(events, e.TokensRevealed)}
    assert revealed == {MARY: backs(state, mary_tokens), PAUL: 0, FRANK: 0}

    expected = [10 + 6 + 4 - 6 + backs(state, mary_tokens), 3 + 6, 7]
    assert [seat.score for seat in after.seats] == expected
    (ended,) = of_type(events, e.GameEnded)
    assert ended.scores == expected
    # The token of an area scored at the end goes back to the box, to nobody.
    assert after.area_tokens[area(after, "N")] is None
    assert all(n_token not in seat.tokens for seat in after.seats)
    assert after.seats[MARY].tokens == mary_tokens


def test_the_final_area_scorings_come_first_then_each_players_own_scoring_then_the_result() -> None:
    events, _ = finish(with_plants(game_over(keep=("N", "H")), {(5, 9): "orange bush"}))

    kinds = [type(ev) for ev in events]
    assert kinds[:2] == [e.AreaScored, e.AreaScored]
    assert kinds[-1] is e.GameEnded
    assert kinds[2:-1] == [e.CloudsScored, e.PlantsPenalised, e.TokensRevealed] * 3


def test_every_plant_left_on_the_player_board_costs_its_value() -> None:
    state = with_seat(game_over(), FRANK, plants=player_board(turf=1, bush=1, pine=1, oak=1))
    state = with_seat(state, PAUL, plants=player_board(neutral_pine=2))

    events, after = finish(state)

    plants = {ev.seat: ev.points for ev in of_type(events, e.PlantsPenalised)}
    assert plants == {MARY: 0, PAUL: -6, FRANK: -10}
    assert [seat.score for seat in after.seats] == [0, -6, -10]


def test_the_most_points_win() -> None:
    state = with_seat(game_over(), FRANK, score=21)
    state = with_seat(state, MARY, score=20, tokens=tokens_of(state, "H", "A"))
    state = with_seat(state, MARY, score=20 - backs(state, state.seats[MARY].tokens))

    _, after = finish(state)

    assert after.winners == (FRANK,)
    assert after.result == (FRANK, MARY, PAUL)


def test_a_tie_goes_to_the_player_with_more_area_tokens() -> None:
    state = game_over()
    mary, frank = tokens_of(state, "H", "A"), tokens_of(state, "L")
    state = with_seat(state, MARY, tokens=mary, score=20 - backs(state, mary))
    state = with_seat(state, FRANK, tokens=frank, score=20 - backs(state, frank))

    events, after = finish(state)

    (ended,) = of_type(events, e.GameEnded)
    assert ended.scores[MARY] == ended.scores[FRANK] == 20
    assert after.winners == (MARY,)
    assert after.result[:2] == (MARY, FRANK)


def test_a_tie_in_points_and_area_tokens_is_a_shared_victory() -> None:
    state = game_over()
    mary, frank = tokens_of(state, "H"), tokens_of(state, "L")
    state = with_seat(state, MARY, tokens=mary, score=20 - backs(state, mary))
    state = with_seat(state, FRANK, tokens=frank, score=20 - backs(state, frank))

    _, after = finish(state)

    assert sorted(after.winners) == [MARY, FRANK]
    assert after.is_over
