"""The deal from a committed seed (English online rules, "Setup"; rulings page, "Components").

Dominoes: 55, every pair of the 10 animals once. Dealt 26 each to 2 players, 18 to 3, 13 to 4;
the rest go back to the box unseen; each player draws a hand of 3 from their own reserve. Area
tokens: one per area, matching its size; the 3 spares (sizes 3, 7, 13) go back unseen.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from itertools import combinations_with_replacement

import pytest
from helpers import SEED, new_game, run

from renature import commands as c
from renature import events as e
from renature.board import load_board
from renature.components import components
from renature.deal import commitment, deal, shuffled

BOARD = load_board("base")


def test_there_are_55_dominoes_every_pair_of_the_10_animals_exactly_once() -> None:
    dominoes = components().dominoes

    assert len(components().animals) == 10
    assert len(dominoes) == 55
    assert sorted(dominoes) == sorted(combinations_with_replacement(range(10), 2))


@pytest.mark.parametrize(("players", "each", "box"), [(2, 26, 3), (3, 18, 1), (4, 13, 3)])
def test_each_player_is_dealt_their_share_and_the_rest_go_back_to_the_box(
    players: int, each: int, box: int
) -> None:
    dealt = deal(SEED, players, BOARD)

    assert [len(h) + len(r) for h, r in zip(dealt.hands, dealt.reserves, strict=True)] == [
        each
    ] * players
    assert all(len(hand) == 3 for hand in dealt.hands)
    assert len(dealt.box) == box


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_domino_is_dealt_exactly_once(players: int) -> None:
    dealt = deal(SEED, players, BOARD)

    everything = [*dealt.box]
    for hand, reserve in zip(dealt.hands, dealt.reserves, strict=True):
        everything += hand + reserve
    assert sorted(everything) == list(range(55))


def test_the_deal_is_the_same_for_the_same_seed_and_different_for_another() -> None:
    assert deal("seed one", 3, BOARD) == deal("seed one", 3, BOARD)
    assert deal("seed one", 3, BOARD).hands != deal("seed two", 3, BOARD).hands


def test_each_area_gets_one_token_of_its_size_and_the_spares_are_sizes_3_7_and_13() -> None:
    dealt = deal(SEED, 4, BOARD)

    assert sorted(dealt.area_tokens) == sorted(BOARD.area_ids)
    for area_id, token_id in dealt.area_tokens.items():
        size = BOARD.area_sizes[BOARD.area_ids.index(area_id)]
        assert BOARD.token(token_id).main == size
    assert sorted(BOARD.token(t).main for t in dealt.spare_tokens) == [3, 7, 13]
    used = [*dealt.area_tokens.values(), *dealt.spare_tokens]
    assert Counter(used) == Counter(t.id for t in BOARD.tokens)


def test_which_token_lies_in_which_area_depends_on_the_seed() -> None:
    layouts = {tuple(sorted(deal(f"seed {i}", 3, BOARD).area_tokens.items())) for i in range(20)}

    assert len(layouts) > 1


def test_the_shuffle_is_the_documented_portable_one() -> None:
    # The j-th number for a purpose is SHA-256("{seed}|{purpose}|{j}") read big-endian; a list
    # is shuffled by Fisher-Yates from the last position down, swapping i with number mod (i+1).
    items = list(range(55))
    expected = list(items)
    for j, i in enumerate(range(len(expected) - 1, 0, -1)):
        number = int.from_bytes(hashlib.sha256(f"{SEED}|dominoes|{j}".encode()).digest(), "big")
        k = number % (i + 1)
        expected[i], expected[k] = expected[k], expected[i]

    assert shuffled(SEED, "dominoes", items) == expected
    order = expected
    dealt = deal(SEED, 3, BOARD)
    assert dealt.hands[0] == order[:3]
    assert dealt.reserves[0] == order[3:18]
    assert dealt.box == order[54:]


def test_the_commitment_is_the_sha256_of_the_seed() -> None:
    assert commitment("abc") == hashlib.sha256(b"abc").hexdigest()
    assert commitment("abc") != commitment("abd")


def test_the_game_records_the_deal_and_starts_from_it() -> None:
    (created,), _ = run(None, c.CreateGame(game_id="g", players=3, seed=SEED))
    state = new_game(3)

    assert isinstance(created, e.GameCreated)
    assert created.deal == deal(SEED, 3, BOARD)
    for seat, hand, reserve in zip(
        state.seats, created.deal.hands, created.deal.reserves, strict=True
    ):
        assert list(seat.hand) == hand
        assert list(seat.reserve) == reserve
    assert list(state.box_dominoes) == created.deal.box
