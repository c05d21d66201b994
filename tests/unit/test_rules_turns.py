"""Set-up and the course of a turn: starting scores, player boards, discarding, refilling,
skipped players, the end of the game, and the errors that protect the turn order (English online
rules, "Setup", "Playing the game", "D:"; rulings page, rulings 2, 8 and 10).
"""

from __future__ import annotations

import hashlib

import pytest
from helpers import (
    SEED,
    domino,
    new_game,
    of_type,
    place,
    plant,
    ready_to_plant,
    run,
    with_clouds,
    with_hand,
    with_turn,
)
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.components import COLOURS, PLANT_TYPES
from renature.errors import (
    GameAlreadyExists,
    GameNotFound,
    GameOver,
    InvalidCommand,
    NotYourTurn,
    RuleError,
    SeedMismatch,
    WrongPhase,
)
from renature.rules import decide, execute, legal_actions

MARY, PAUL, FRANK = 0, 1, 2

# --- set-up --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "scores"), [(2, [4, 3]), (3, [4, 3, 2]), (4, [4, 3, 2, 1])])
def test_the_starting_player_begins_with_4_points_and_the_others_clockwise_3_2_1(
    players: int, scores: list[int]
) -> None:
    state = new_game(players)

    assert [seat.score for seat in state.seats] == scores
    assert (state.current, state.phase, state.turn) == (0, "place_domino", 1)


@pytest.mark.parametrize(
    ("players", "colours"),
    [
        (2, ["black", "white"]),
        (3, ["orange", "blue", "black"]),
        (4, ["orange", "blue", "black", "white"]),
    ],
)
def test_seat_colours_follow_the_online_order_and_2_players_play_black_and_white(
    players: int, colours: list[str]
) -> None:
    state = new_game(players)

    assert [COLOURS[seat.colour] for seat in state.seats] == colours


@pytest.mark.parametrize(
    ("players", "board"),
    [
        (2, ((9, 4, 2, 2), (3, 2, 2, 2))),  # two paraglider boards side by side
        (3, ((5, 3, 2, 1), (2, 1, 1, 1))),  # balloon side
        (4, ((5, 3, 2, 1), (1, 1, 1, 1))),  # balloon side, the 4-player icon space left empty
    ],
)
def test_every_player_board_starts_full_of_plants_and_with_6_clouds(
    players: int, board: tuple[tuple[int, ...], tuple[int, ...]]
) -> None:
    own, neutral = board
    state = new_game(players)

    for seat in state.seats:
        assert seat.plants == (*own, *neutral)
        assert seat.clouds == 6
        assert seat.tokens == ()


def test_the_plant_supply_suffices_for_every_player_board() -> None:
    supply = {"white": (9, 4, 2, 2), "black": (9, 4, 2, 2), "orange": (5, 3, 2, 1)}
    supply |= {"blue": (5, 3, 2, 1), "neutral": (6, 4, 4, 4)}
    for players in (2, 3, 4):
        state = new_game(players)
        for kind in range(len(PLANT_TYPES)):
            neutral = sum(seat.plants[4 + kind] for seat in state.seats)
            assert neutral <= supply["neutral"][kind]
            for seat in state.seats:
                assert seat.plants[kind] <= supply[COLOURS[seat.colour]][kind]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_board_starts_with_5_clouds_on_4_area_spaces_and_the_rest_in_the_box(
    players: int,
) -> None:
    state = new_game(players)
    on_board = {state.board.xy(i): n for i, n in enumerate(state.clouds) if n}

    assert on_board == {(9, 5): 2, (18, 5): 1, (7, 3): 1, (9, 10): 1}
    assert all(state.area_of[state.board.index(x, y)] >= 0 for x, y in on_board)
    assert state.box_clouds == 30 - 5 - 6 * players


def test_the_joker_starts_on_the_butterfly_and_each_area_holds_a_token_of_its_size() -> None:
    state = new_game()

    assert state.joker == 0  # butterfly
    board = state.board
    for index, token_id in enumerate(state.area_tokens):
        assert token_id is not None
        assert board.token(token_id).main == board.area_sizes[index]
    assert len(set(state.area_tokens)) == 18


@pytest.mark.parametrize(("players", "dealt"), [(2, 26), (3, 18), (4, 13)])
def test_each_player_holds_3_dominoes_and_keeps_the_rest_of_the_deal_in_reserve(
    players: int, dealt: int
) -> None:
    state = new_game(players)

    for seat in state.seats:
        assert len(seat.hand) == 3
        assert len(seat.reserve) == dealt - 3


# --- the lobby -----------------------------------------------------------------------------------


def test_a_game_is_played_by_2_3_or_4_players() -> None:
    for players in (1, 5):
        with pytest.raises(InvalidCommand):
            execute(None, c.CreateGame(game_id="g", players=players, seed=SEED))


def test_a_game_cannot_be_created_twice_nor_played_before_it_exists() -> None:
    state = new_game()

    with pytest.raises(GameAlreadyExists):
        execute(state, c.CreateGame(game_id="unit-game", players=3, seed=SEED))
    with pytest.raises(GameNotFound):
        execute(None, c.StartGame())


def test_the_game_starts_only_when_every_seat_is_taken_and_nobody_joins_later() -> None:
    created = run(None, c.CreateGame(game_id="g", players=3, seed=SEED), c.JoinGame(0, "Mary"))[1]

    with pytest.raises(WrongPhase, match="no player"):
        execute(created, c.StartGame())
    with pytest.raises(WrongPhase, match="not started"):
        execute(created, c.DiscardDomino(0, created.seats[0].hand[0]))
    with pytest.raises(WrongPhase, match="no more players"):
        execute(new_game(), c.JoinGame(1, "Late"))


def test_the_seed_commitment_is_the_sha256_of_the_seed() -> None:
    events, _ = execute(None, c.CreateGame(game_id="g", players=3, seed="a secret seed"))
    (created,) = of_type(events, e.GameCreated)

    assert created.seed_commitment == hashlib.sha256(b"a secret seed").hexdigest()


# --- step A: discard (ruling 2) ------------------------------------------------------------------


def test_a_player_may_discard_a_domino_even_when_it_could_be_placed() -> None:
    state = new_game()
    d = state.seats[MARY].hand[0]
    assert any(isinstance(a, c.PlaceDomino) and a.domino == d for a in legal_actions(state, MARY))

    events, after = run(state, c.DiscardDomino(MARY, d))

    (discarded,) = of_type(events, e.DominoDiscarded)
    assert discarded.domino == d
    assert d in after.box_dominoes
    assert d not in after.seats[MARY].hand
    assert all(cover < 0 for cover in after.cover)


def test_a_player_may_not_place_a_second_domino_in_one_turn() -> None:
    state = new_game()
    first, second, _ = state.seats[MARY].hand
    state = run(state, c.DiscardDomino(MARY, first))[1]

    with pytest.raises(WrongPhase, match="already placed or discarded"):
        run(state, c.DiscardDomino(MARY, second))


# --- step D: refill (ruling 8) -------------------------------------------------------------------


def test_step_d_refills_the_hand_with_the_top_domino_of_the_reserve() -> None:
    state = with_hand(new_game(), MARY, domino("owl", "frog"), 1, 2, reserve=[7, 8])

    events, after = run(state, place(MARY, "owl", (4, 2), "frog", (4, 1)), c.SkipPlant(MARY))

    (drawn,) = of_type(events, e.DominoDrawn)
    assert drawn.domino == 7
    assert after.seats[MARY].hand == (1, 2, 7)
    assert after.seats[MARY].reserve == (8,)


def test_step_d_refills_the_hand_after_a_discard_too() -> None:
    state = with_hand(new_game(), MARY, 1, 2, 3, reserve=[7])

    events, after = run(state, c.DiscardDomino(MARY, 1))

    assert [ev.domino for ev in of_type(events, e.DominoDrawn)] == [7]
    assert after.seats[MARY].hand == (2, 3, 7)
    assert after.seats[MARY].reserve == ()


def test_with_an_empty_reserve_the_hand_is_not_refilled() -> None:
    state = with_hand(new_game(), MARY, 1, 2, 3)

    events, after = run(state, c.DiscardDomino(MARY, 1))

    assert of_type(events, e.DominoDrawn) == []
    assert after.seats[MARY].hand == (2, 3)


# --- the end of a turn (ruling 10) ---------------------------------------------------------------


def test_ending_the_turn_passes_it_to_the_next_player_clockwise() -> None:
    state = run(new_game(), c.DiscardDomino(MARY, new_game().seats[MARY].hand[0]))[1]
    assert state.phase == "end_of_turn"  # Mary could still spend clouds

    events, after = run(state, c.EndTurn(MARY))

    (ended,) = of_type(events, e.TurnEnded)
    assert (ended.seat, ended.next_seat, ended.skipped) == (MARY, PAUL, [])
    assert (after.current, after.phase, after.turn) == (PAUL, "place_domino", 2)


def test_the_turn_ends_by_itself_when_the_player_cannot_pay_for_any_cloud_action() -> None:
    state = with_clouds(new_game(), MARY, 0)

    events, after = run(state, c.DiscardDomino(MARY, state.seats[MARY].hand[0]))

    assert of_type(events, e.TurnEnded)[0].next_seat == PAUL
    assert after.current == PAUL


def test_a_player_with_clouds_to_spend_ends_the_turn_explicitly() -> None:
    state = with_clouds(new_game(), MARY, 2)

    _, after = run(state, c.DiscardDomino(MARY, state.seats[MARY].hand[0]))

    assert (after.current, after.phase) == (MARY, "end_of_turn")
    assert legal_actions(after, MARY)[0] == c.EndTurn(MARY)


def test_the_last_plant_of_a_turn_can_be_followed_by_ending_it() -> None:
    state = ready_to_plant(new_game(), MARY, (13, 4), (13, 5))

    _, after = run(state, plant(MARY, (14, 5), "orange turf"), c.EndTurn(MARY))

    assert after.current == PAUL


# --- skipped players and the end of the game (ruling 8) ------------------------------------------


def test_a_player_without_dominoes_is_skipped() -> None:
    state = with_hand(new_game(), PAUL)  # Paul has no domino in hand or reserve

    events, after = run(state, c.DiscardDomino(MARY, state.seats[MARY].hand[0]), c.EndTurn(MARY))

    (ended,) = of_type(events, e.TurnEnded)
    assert (ended.next_seat, ended.skipped) == (FRANK, [PAUL])
    assert after.current == FRANK


def test_the_last_player_holding_dominoes_plays_on_alone() -> None:
    state = with_hand(with_hand(new_game(), PAUL), FRANK)

    events, after = run(state, c.DiscardDomino(MARY, state.seats[MARY].hand[0]), c.EndTurn(MARY))

    (ended,) = of_type(events, e.TurnEnded)
    assert (ended.next_seat, ended.skipped) == (MARY, [PAUL, FRANK])
    assert (after.current, after.phase) == (MARY, "place_domino")


def test_the_game_ends_when_nobody_holds_a_domino() -> None:
    state = with_hand(with_hand(with_hand(new_game(), PAUL), FRANK), MARY, 5)

    events, after = run(state, c.DiscardDomino(MARY, 5), c.EndTurn(MARY))

    (ended,) = of_type(events, e.TurnEnded)
    assert ended.next_seat is None
    assert after.phase == "final_scoring"
    assert all(legal_actions(after, seat) == [] for seat in range(3))
    with pytest.raises(GameOver):
        run(after, c.EndTurn(MARY))


def test_the_game_finishes_with_the_seed_that_matches_the_commitment() -> None:
    state = replace(new_game(), phase="final_scoring", current=-1)

    with pytest.raises(SeedMismatch):
        run(state, c.FinishGame("another seed"))
    _, after = run(state, c.FinishGame(SEED))
    assert after.phase == "finished"
    assert after.revealed_seed == SEED


def test_the_game_cannot_be_finished_while_dominoes_remain() -> None:
    with pytest.raises(WrongPhase):
        run(new_game(), c.FinishGame(SEED))


# --- turn order errors, and decide is pure ------------------------------------------------------


def test_only_the_current_player_may_act() -> None:
    state = new_game()

    with pytest.raises(NotYourTurn):
        decide(state, c.DiscardDomino(PAUL, state.seats[PAUL].hand[0]))
    with pytest.raises(NotYourTurn):
        decide(state, c.EndTurn(FRANK))


@pytest.mark.parametrize(
    ("phase", "command"),
    [
        ("place_domino", c.EndTurn(MARY)),
        ("place_domino", c.SkipPlant(MARY)),
        ("place_plant", c.EndTurn(MARY)),
        ("place_plant", "discard"),
        ("end_of_turn", "discard"),
        ("end_of_turn", c.SkipPlant(MARY)),
    ],
)
def test_a_command_out_of_its_step_is_a_wrong_phase(phase: str, command: c.Command | str) -> None:
    state = with_turn(new_game(), MARY, phase)
    sent = c.DiscardDomino(MARY, state.seats[MARY].hand[0]) if command == "discard" else command
    assert not isinstance(sent, str)

    with pytest.raises(WrongPhase):
        decide(state, sent)


def test_decide_leaves_the_state_it_was_given_unchanged() -> None:
    state = new_game()
    snapshot = replace(state)
    hand = state.seats[MARY].hand

    with pytest.raises(RuleError):
        decide(state, c.DiscardDomino(PAUL, hand[0]))
    first = decide(state, c.DiscardDomino(MARY, hand[0]))
    again = decide(state, c.DiscardDomino(MARY, hand[0]))
    other = decide(state, c.DiscardDomino(MARY, hand[1]))  # the same state is still valid

    assert state == snapshot
    assert first == again
    assert of_type(other, e.DominoDiscarded)[0].domino == hand[1]
