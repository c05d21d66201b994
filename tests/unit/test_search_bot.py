"""The search bot (``gameplatform.search``, ``mcts`` in every game): it only ever plays legal
actions, it decides on what its seat sees and nothing more, it is deterministic for its seed and
budget, and a game of every hosted game with it finishes."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, TypeVar, cast

import msgspec
import pytest

from gameplatform import game_names, get_game, search
from gameplatform.chain import Event
from gameplatform.core_adapter import CoreAdapter
from gameplatform.interface import Game, HostedState
from gameplatform.sealed import Sealed, reveal_problem
from goofspiel.adapter import GAME as GOOFSPIEL
from goofspiel.state import GameState as GoofspielState
from goofspiel.view import perspective as goofspiel_perspective
from renaissance import commands as renaissance_commands
from renaissance.adapter import GAME as RENAISSANCE
from renaissance.commands import JankenHand
from renaissance.game import setup_commands as renaissance_setup
from renaissance.janken import JANKEN_HANDS
from renaissance.state import GameState as RenaissanceState
from renature import determinize as sampling
from renature.adapter import GAME as RENATURE
from renature.components import NEUTRAL, components, plant_code, plant_value
from renature.game import play, replay
from renature.perspective import perspective
from renature.scoring import area_awards
from renature.state import GameState

QUICK = search.Budget(iterations=6, rollout_depth=2)
"""Enough to exercise every part of the search in a unit test's time."""


S = TypeVar("S", bound=HostedState)
C = TypeVar("C", bound=msgspec.Struct)
E = TypeVar("E", bound=Event)


def to_move(game: Game[S, C, E], state: S) -> int:
    """The seat the game waits for (these tests play on: there is one)."""
    seat = game.to_move(state)
    assert seat is not None
    return seat


def started(game: Game[S, C, E], seed: str) -> S:
    state: S | None = None
    for command in game.setup_commands("g-search", seed, 2, ["ann", "bob"]):
        _, state = game.execute(state, command)
    assert state is not None
    return state


def advanced(game: Game[S, C, E], seed: str, moves: int) -> S:
    """A state ``moves`` greedy moves into a 2-player game."""
    state = started(game, seed)
    bots = [game.make_bot("greedy", f"{seed}|{seat}") for seat in (0, 1)]
    for _ in range(moves):
        seat = to_move(game, state)
        _, state = game.execute(state, bots[seat].choose(state, seat))
    return state


@pytest.mark.parametrize("name", game_names())
def test_every_game_offers_the_search_bot(name: str) -> None:
    game = get_game(name)
    assert search.NAME in game.bot_names
    assert isinstance(game.make_bot(search.NAME, "s"), search.SearchBot)


@pytest.mark.parametrize("name", game_names())
def test_a_game_with_the_search_bot_finishes_and_every_choice_is_legal(name: str) -> None:
    game = get_game(name)
    seed = f"search-{name}"
    state = started(game, seed)
    bots: list[Any] = [search.SearchBot(game, "mcts", QUICK), game.make_bot("random", "r")]
    searched = 0
    for _ in range(2_000):
        finish = game.finishing_command(state, seed)
        if finish is not None:
            _, state = game.execute(state, finish)
        if game.is_over(state):
            break
        seat = to_move(game, state)
        action = bots[seat].choose(state, seat)
        if seat == 0:
            assert action in game.legal_actions(state, seat)
            searched += 1
        _, state = game.execute(state, action)
    assert game.is_over(state)
    assert searched > 10
    assert len(game.table(state).scores) == 2


@pytest.mark.parametrize("name", game_names())
def test_the_same_seed_and_budget_choose_the_same(name: str) -> None:
    game = get_game(name)
    state = advanced(game, f"same-{name}", 12)
    seat = to_move(game, state)
    choices = [search.SearchBot(game, "seed-1", QUICK).choose(state, seat) for _ in range(2)]
    assert choices[0] == choices[1]
    assert choices[0] in game.legal_actions(state, seat)


def test_a_single_legal_action_is_played_without_a_search() -> None:
    game = RENAISSANCE
    state = started(game, "single")
    greedy = game.make_bot("greedy", "g")
    while len(game.legal_actions(state, to_move(game, state))) != 1:
        seat = to_move(game, state)
        _, state = game.execute(state, greedy.choose(state, seat))
    seat = to_move(game, state)

    def never(done: int) -> bool:
        raise AssertionError(f"searched ({done} iterations) with one legal action")

    bot = search.SearchBot(game, "s", QUICK)
    assert bot.choose_within(state, seat, never) == game.legal_actions(state, seat)[0]


# --- what the seat may not see ------------------------------------------------------------


def secrets_swapped(state: GameState, seat: int) -> GameState:
    """``state`` with every domino ``seat`` cannot see dealt again: the other hands, the
    reserves and the box shuffled among themselves (sizes kept)."""
    other = 1 - seat
    hidden = [
        *state.seats[other].hand,
        *(d for s in state.seats for d in s.reserve),
        *state.box_dominoes,
    ]
    random.Random(7).shuffle(hidden)
    rest = iter(hidden)

    def take(count: int) -> tuple[int, ...]:
        return tuple(next(rest) for _ in range(count))

    seats = list(state.seats)
    seats[other] = msgspec.structs.replace(seats[other], hand=take(len(seats[other].hand)))
    seats = [msgspec.structs.replace(s, reserve=take(len(s.reserve))) for s in seats]
    return msgspec.structs.replace(
        state, seats=tuple(seats), box_dominoes=take(len(state.box_dominoes)), last_hash="x"
    )


def test_renature_states_that_differ_only_in_secrets_get_the_same_choice() -> None:
    game = RENATURE
    state = advanced(game, "secrets", 9)
    seat = to_move(game, state)
    other = secrets_swapped(state, seat)
    assert other.seats[1 - seat].hand != state.seats[1 - seat].hand
    assert perspective(other, seat) == perspective(state, seat)
    for bot_seed in ("a", "b", "c"):
        mine = search.SearchBot(game, bot_seed, QUICK).choose(state, seat)
        theirs = search.SearchBot(game, bot_seed, QUICK).choose(other, seat)
        assert mine == theirs


def test_a_renature_determinization_keeps_what_the_seat_sees_and_deals_the_rest() -> None:
    events, _ = play(3, "determinize", ["greedy"] * 3)
    state = replay(events[: len(events) // 2])
    assert state is not None
    for seat in range(3):
        drawn = sampling.determinize(state, seat, random.Random(seat), search.FINISH_SEED)
        assert drawn.seats[seat].hand == state.seats[seat].hand
        assert drawn.seats[seat].tokens == state.seats[seat].tokens
        seen = msgspec.structs.replace(perspective(drawn, seat), commitment=state.commitment)
        assert seen == perspective(state, seat)
        every = Counter(
            [
                *(d for s in drawn.seats for d in (*s.hand, *s.reserve)),
                *drawn.box_dominoes,
                *(d for d, _, _ in drawn.dominoes),
            ]
        )
        assert every == Counter(range(len(components().dominoes)))
        fronts = [
            (token.main, token.minor)
            for token in (drawn.board.token(t) for t in drawn.area_tokens if t is not None)
        ]
        real = [
            (token.main, token.minor)
            for token in (state.board.token(t) for t in state.area_tokens if t is not None)
        ]
        assert fronts == real


def test_a_rollout_reaching_the_end_reveals_the_made_up_seed() -> None:
    game = RENATURE
    events, _ = play(2, "to-the-end", ["greedy", "greedy"])
    last_turn = max(i for i, ev in enumerate(events) if type(ev).__name__ == "TurnEnded")
    state = replay(events[: last_turn - 3])
    assert state is not None
    assert not state.is_over
    drawn = game.determinize(state, 0, random.Random(1), search.FINISH_SEED)
    bots = [game.make_bot("greedy", f"end|{seat}") for seat in (0, 1)]
    while drawn.phase != "final_scoring":
        seat = to_move(game, drawn)
        _, drawn = game.execute(drawn, bots[seat].choose(drawn, seat))
    finish = game.finishing_command(drawn, search.FINISH_SEED)
    assert finish is not None
    _, done = game.execute(drawn, finish)
    assert game.is_over(done)
    assert search.result_values(game.table(done)) in ([1.0, 0.0], [0.0, 1.0], [0.5, 0.5])


class _Open(CoreAdapter[Any, Any, Any]):  # no state is ever folded
    name = "open"
    hidden_information = False


class _Secretive(CoreAdapter[Any, Any, Any]):
    name = "secretive"
    hidden_information = True


def test_a_game_without_hidden_information_is_its_own_determinization() -> None:
    state = object()
    assert _Open().determinize(state, 0, random.Random(0), search.FINISH_SEED) is state
    with pytest.raises(NotImplementedError, match="secretive"):
        _Secretive().determinize(state, 0, random.Random(0), search.FINISH_SEED)


def test_renaissance_without_a_sealed_hand_is_its_own_determinization() -> None:
    game = RENAISSANCE
    state = advanced(game, "open", 5)
    assert game.determinize(state, 0, random.Random(0), search.FINISH_SEED) is state


def janken_half_shown(hand: str) -> RenaissanceState:
    """A Renaissance game of Phase 2 only, its first Janken under way: Gold (seat 1, who
    shows first) has sealed ``hand``, Silver (seat 0) is to show."""
    game = RENAISSANCE
    state: RenaissanceState | None = None
    variant = renaissance_commands.Variant(play="phase2", distribution="take")
    for command in renaissance_setup(
        "g-janken", "janken", ["silver", "gold"], 1, "points", variant
    ):
        _, state = game.execute(state, command)
    assert state is not None
    assert game.to_move(state) == 1
    _, state = game.execute(
        state, renaissance_commands.ShowHand(1, cast("JankenHand", hand), "s" * 32)
    )
    assert game.to_move(state) == 0
    return state


def janken_of(state: RenaissanceState) -> Sealed:
    assert state.janken is not None, "a Janken under way"
    return state.janken


def test_a_renaissance_determinization_draws_the_other_seats_sealed_hand() -> None:
    game = RENAISSANCE
    state = janken_half_shown("rock")
    drawn = [
        janken_of(game.determinize(state, 0, random.Random(n), search.FINISH_SEED))
        for n in range(30)
    ]
    assert all(j.slots[0] == janken_of(state).slots[0] for j in drawn)  # its own slot: still empty
    assert {j.slots[1].choice for j in drawn} == set(JANKEN_HANDS)
    for j in drawn:  # each drawn hand sealed so that it opens its own commitment
        assert reveal_problem(j.slots[1].commitment, j.slots[1].choice, j.slots[1].salt) is None
    assert game.determinize(state, 1, random.Random(0), search.FINISH_SEED) == state  # its own


def test_a_renaissance_janken_choice_does_not_depend_on_the_sealed_hand() -> None:
    game = RENAISSANCE
    states = [janken_half_shown(hand) for hand in JANKEN_HANDS]
    assert [janken_of(s).slots[1].choice for s in states] == list(JANKEN_HANDS)
    for bot_seed in ("a", "b"):
        choices = [search.SearchBot(game, bot_seed, QUICK).choose(s, 0) for s in states]
        assert choices[0] == choices[1] == choices[2]


def goofspiel_seat_1_to_bid(seed: str, turns: int) -> GoofspielState:
    """A Goofspiel game ``turns`` greedy turns in, seat 0 having sealed its next bid."""
    game = GOOFSPIEL
    state = advanced(game, seed, 2 * turns + 1)
    assert game.to_move(state) == 1
    return state


def test_a_goofspiel_determinization_keeps_what_the_seat_sees_and_draws_the_rest() -> None:
    game = GOOFSPIEL
    state = goofspiel_seat_1_to_bid("determinize", 3)
    bids, orders = set(), set()
    for n in range(40):
        drawn = game.determinize(state, 1, random.Random(n), search.FINISH_SEED)
        seen = msgspec.structs.replace(goofspiel_perspective(drawn, 1), commitment=state.commitment)
        assert seen == goofspiel_perspective(state, 1)
        assert drawn.prizes[: state.turn] == state.prizes[: state.turn]
        assert drawn.bids[0] in state.hands[0]
        bids.add(drawn.bids[0])
        orders.add(drawn.prizes[state.turn :])
    assert len(bids) > 1
    assert len(orders) > 1


def test_a_goofspiel_rollout_reaching_the_end_reveals_the_made_up_seed() -> None:
    game = GOOFSPIEL
    state = goofspiel_seat_1_to_bid("to-the-end", 5)
    drawn = game.determinize(state, 1, random.Random(3), search.FINISH_SEED)
    bots = [game.make_bot("random", f"end|{seat}") for seat in (0, 1)]
    while game.to_move(drawn) is not None:
        seat = to_move(game, drawn)
        _, drawn = game.execute(drawn, bots[seat].choose(drawn, seat))
    finish = game.finishing_command(drawn, search.FINISH_SEED)
    assert finish is not None
    _, done = game.execute(drawn, finish)
    assert game.is_over(done)


def test_a_goofspiel_bid_does_not_depend_on_the_other_seats_sealed_bid() -> None:
    game = GOOFSPIEL
    state = goofspiel_seat_1_to_bid("secrets", 2)
    others = [msgspec.structs.replace(state, bids=(card, state.bids[1])) for card in state.hands[0]]
    prizes = list(state.prizes[state.turn :])
    random.Random(5).shuffle(prizes)
    others.append(msgspec.structs.replace(state, prizes=(*state.prizes[: state.turn], *prizes)))
    assert len({game.state_json(s, 1) for s in [state, *others]}) == 1
    for bot_seed in ("a", "b"):
        mine = search.SearchBot(game, bot_seed, QUICK).choose(state, 1)
        assert all(search.SearchBot(game, bot_seed, QUICK).choose(o, 1) == mine for o in others)


def test_margins_value_a_level_game_at_one_half_and_a_lead_above() -> None:
    assert search.margin_values([10, 10], 8) == [0.5, 0.5]
    ahead, behind = search.margin_values([20, 10], 8)
    assert ahead > 0.5 > behind
    assert ahead + behind == pytest.approx(1.0)
    three = search.margin_values([5, 9, 9], 4)
    assert three[0] < three[1] == three[2] == 0.5


@pytest.mark.parametrize("name", game_names())
def test_every_game_evaluates_an_unfinished_game_per_seat_within_zero_and_one(name: str) -> None:
    game = get_game(name)
    values = game.evaluate(advanced(game, f"eval-{name}", 20))
    assert len(values) == 2
    assert all(0.0 <= v <= 1.0 for v in values)


# --- the command line ---------------------------------------------------------------------


@pytest.mark.parametrize("name", game_names())
def test_simulate_takes_the_search_bot_for_every_game(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from gameserver.cli import app

    monkeypatch.setattr(get_game(name), "search_budget", QUICK)  # a quick game, the same path
    args = ["simulate", "--game", name, "--players", "2", "--bots", "mcts,random", "--json"]
    result = CliRunner().invoke(app, [*args, "--seed", "cli"])
    assert result.exit_code == 0, result.output
    outcome = msgspec.json.decode(result.output)
    assert outcome["bots"] == ["mcts", "random"]
    assert len(outcome["scores"]) == 2


def test_a_time_budget_is_the_callers_and_still_plays_a_legal_move() -> None:
    from gameserver.cli.bot_commands import timed

    game = get_game("renature")  # as the command line holds it
    state = advanced(game, "timed", 3)
    seat = to_move(game, state)
    choose = timed(game.make_bot(search.NAME, "t"), 0.05)
    assert choose(state, seat) in game.legal_actions(state, seat)
    greedy = game.make_bot("greedy", "g")
    assert timed(greedy, 0.05) == greedy.choose


class _Recorder(search.SearchBot[Any, Any, Any]):  # any game's
    """A search bot that records the seat of every node it adds to its tree."""

    movers: list[int]

    def _select(self, node: Any, position: Any, mover: int, actions: dict[bytes, Any]) -> bytes:
        self.movers.append(mover)
        return super()._select(node, position, mover, actions)


@pytest.mark.parametrize("name", game_names())
def test_a_modelled_opponent_is_never_searched(name: str) -> None:
    game = get_game(name)
    state = advanced(game, f"modelled-{name}", 3)
    seat = to_move(game, state)
    bot = _Recorder(game, "m", search.Budget(iterations=20, rollout_depth=2, opponent_model=0.5))
    bot.movers = []
    assert bot.choose(state, seat) in game.legal_actions(state, seat)
    assert bot.movers
    assert set(bot.movers) == {seat}


def test_a_modelled_opponent_plays_the_policys_choice_at_weight_one_and_any_at_zero() -> None:
    game = GOOFSPIEL
    state = advanced(game, "weights", 2)
    greedy = game.make_bot("greedy", "g").choose(state, 0)
    always = search.SearchBot(game, "w", search.Budget(opponent_model=1.0))
    assert {always._modelled(state, 0) for _ in range(50)} == {greedy}
    never = search.SearchBot(game, "w", search.Budget(opponent_model=0.0))
    assert {never._modelled(state, 0) for _ in range(400)} == set(game.legal_actions(state, 0))


def _prospects_by_awards(state: GameState) -> list[float]:
    """The heuristic written with the rules' own area scoring (``area_awards``)."""
    points = [0.0] * state.players
    for area in sampling._scored_at_the_end(state):
        token_id = state.area_tokens[area]
        if token_id is None:
            front = (state.area_sizes[area], state.area_sizes[area] // 2)
        else:
            front = (state.board.token(token_id).main, state.board.token(token_id).minor)
        for award in area_awards(state, area, *front)[2]:
            points[award.seat] += award.points
    for number, seat in enumerate(state.seats):
        left = sum(
            count * plant_value(plant_code(seat.colour if slot < 4 else NEUTRAL, slot % 4))
            for slot, count in enumerate(seat.plants)
        )
        backs = sum(state.board.token(t).back for t in seat.tokens)
        points[number] += seat.score + seat.clouds - left + backs
    return points


@pytest.mark.parametrize(("players", "board"), [(2, "base"), (3, "base"), (2, "valley")])
def test_renatures_heuristic_counts_majorities_as_the_area_scoring_awards_them(
    players: int, board: str
) -> None:
    events, _ = play(players, f"heuristic-{board}", ["greedy"] * players, board=board)
    checked = 0
    for upto in range(20, len(events), 7):
        state = replay(events[:upto])
        assert state is not None
        if state.phase == "finished":
            break
        assert sampling.prospects(state) == _prospects_by_awards(state)
        checked += 1
    assert checked > 5
