"""Goofspiel's model of the other seat for the search bot (``goofspiel.search_model``): the
belief over a sealed bid is the documented mixture, a determinization never reads the real
sealed bid, and the search with the modelled opponent is deterministic for its seed."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from gameplatform import search
from goofspiel import search_model
from goofspiel.adapter import GAME
from goofspiel.bots import GreedyBot
from goofspiel.commands import Bid
from goofspiel.state import GameState
from goofspiel.view import perspective


def after_turns(seed: str, moves: int) -> GameState:
    """A game ``moves`` greedy bids in (seat 0 has sealed its bid when ``moves`` is odd)."""
    state: GameState | None = None
    for command in GAME.setup_commands("g-model", seed, 2, ["ann", "bob"]):
        _, state = GAME.execute(state, command)
    assert state is not None
    greedy = GreedyBot("g")
    for _ in range(moves):
        seat = to_move(state)
        _, state = GAME.execute(state, greedy.choose(state, seat))
    return state


def to_move(state: GameState) -> int:
    seat = GAME.to_move(state)
    assert seat is not None
    return seat


def test_the_belief_gives_the_greedy_card_the_model_weight_and_spreads_the_rest() -> None:
    state = after_turns("belief", 7)
    hand = state.hands[0]
    belief = search_model.bid_belief(state, 0)
    chosen = GreedyBot("g").choose(state, 0)
    assert isinstance(chosen, Bid)
    greedy = chosen.card
    uniform = (1 - search_model.MODEL_WEIGHT) / len(hand)
    assert set(belief) == set(hand)
    assert sum(belief.values()) == pytest.approx(1.0)
    assert belief[greedy] == pytest.approx(search_model.MODEL_WEIGHT + uniform)
    assert all(belief[card] == pytest.approx(uniform) for card in hand if card != greedy)


def test_draws_follow_the_belief() -> None:
    state = after_turns("draws", 5)
    belief = search_model.bid_belief(state, 0)
    rng = random.Random(7)
    draws = Counter(search_model.draw_bid(state, 0, rng) for _ in range(20_000))
    for card, probability in belief.items():
        assert draws[card] / 20_000 == pytest.approx(probability, abs=0.015)


def test_a_determinization_never_reads_the_sealed_bid() -> None:
    state = after_turns("sealed", 9)
    assert GAME.to_move(state) == 1
    variants = [
        msgspec.structs.replace(state, bids=(card, state.bids[1])) for card in state.hands[0]
    ]
    drawn = {
        msgspec.json.encode(GAME.determinize(v, 1, random.Random(3), search.FINISH_SEED))
        for v in variants
    }
    assert len(drawn) == 1
    sample: GameState = GAME.determinize(state, 1, random.Random(3), search.FINISH_SEED)
    assert sample.bids[0] in state.hands[0]
    assert perspective(sample, 1).bids == perspective(state, 1).bids


def test_the_searching_seats_own_sealed_bid_is_kept() -> None:
    state = after_turns("own", 9)
    sample = GAME.determinize(state, 0, random.Random(1), search.FINISH_SEED)
    assert sample.bids == state.bids


def test_the_goofspiel_bot_models_the_other_seat_with_the_same_weight() -> None:
    bot = GAME.make_bot(search.NAME, "s")
    assert isinstance(bot, search.SearchBot)
    assert bot.budget.opponent_model == search_model.MODEL_WEIGHT
    assert bot.budget.rollout_policy == "greedy"


@pytest.mark.parametrize("moves", [4, 9])
def test_the_same_seed_gives_the_same_bid(moves: int) -> None:
    state = after_turns("same", moves)
    seat = to_move(state)
    budget = search.Budget(iterations=30, rollout_depth=13, opponent_model=0.5)
    bids = {search.SearchBot(GAME, "one", budget).choose(state, seat) for _ in range(3)}
    assert len(bids) == 1
