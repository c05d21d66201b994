"""The rules of docs/rules-goofspiel.md, one test a sentence."""

from __future__ import annotations

import pytest
from gs_games import SEED, bids, started

from gameplatform.dealing import commitment
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.errors import (
    AlreadyBid,
    CardNotInHand,
    InvalidCommand,
    NotYourTurn,
    SeedMismatch,
    WrongPhase,
)
from goofspiel.rules import execute, legal_actions, prize_deck
from goofspiel.view import view, visible_event


def test_each_player_holds_one_suit_ace_to_king() -> None:
    _, state = started()
    assert state.hands == (tuple(range(1, 14)), tuple(range(1, 14)))
    bids = legal_actions(state, 0)
    assert all(isinstance(bid, c.Bid) for bid in bids)
    assert [bid.card for bid in bids if isinstance(bid, c.Bid)] == list(range(1, 14))


def test_the_prize_deck_is_the_third_suit_shuffled_from_the_seed() -> None:
    log, state = started()
    created = log[0]
    assert isinstance(created, e.GameCreated)
    assert sorted(created.prizes) == list(range(1, 14))
    assert created.prizes == prize_deck(SEED, 13) != list(range(1, 14))
    assert created.seed_commitment == commitment(SEED)
    assert started(seed="another")[1].prizes != state.prizes


def test_each_turn_the_top_prize_is_turned_up() -> None:
    log, state = started()
    revealed = log[-1]
    assert isinstance(revealed, e.PrizeRevealed)
    assert (revealed.turn, revealed.prize, revealed.pot) == (1, state.prizes[0], [state.prizes[0]])
    assert view(state, None).prize == state.prizes[0]


def test_the_higher_bid_wins_the_prize_and_scores_its_value() -> None:
    _, state = started()
    prize = state.prizes[0]
    events, state = bids(state, (5, 9))
    revealed = events[2]
    assert isinstance(revealed, e.BidsRevealed)
    assert (revealed.bids, revealed.winner, revealed.points) == ([5, 9], 1, prize)
    assert state.scores == (0, prize)
    assert state.won == ((), (prize,))
    assert e.points_awarded(revealed)[0][:2] == (1, prize)


def test_equal_bids_discard_the_prize() -> None:
    _, state = started()
    prize, following = state.prizes[0], state.prizes[1]
    events, state = bids(state, (7, 7))
    revealed, turned = events[2], events[3]
    assert isinstance(revealed, e.BidsRevealed)
    assert isinstance(turned, e.PrizeRevealed)
    assert (revealed.winner, revealed.points, revealed.discarded) == (None, 0, True)
    assert state.discarded == (prize,)
    assert turned.pot == [following]
    assert state.scores == (0, 0)


def test_with_carry_a_tied_prize_goes_to_the_next_turns_winner() -> None:
    _, state = started(ties="carry")
    first, second = state.prizes[0], state.prizes[1]
    events, state = bids(state, (7, 7))
    assert isinstance(events[2], e.BidsRevealed)
    assert not events[2].discarded
    assert isinstance(events[3], e.PrizeRevealed)
    assert events[3].pot == [first, second]
    _, state = bids(state, (13, 1))
    assert state.scores == (first + second, 0)
    assert state.discarded == ()


def test_a_tie_on_the_last_turn_discards_the_pot_even_with_carry() -> None:
    _, state = started(cards=2, ties="carry")
    events, state = bids(state, (1, 1), (2, 2))
    assert isinstance(events[-1], e.BidsRevealed)
    assert events[-1].discarded
    assert events[-1].pot == list(state.prizes)
    assert sorted(state.discarded) == [1, 2]


def test_a_card_once_bid_cannot_be_bid_again() -> None:
    _, state = started()
    _, state = bids(state, (5, 9))
    with pytest.raises(CardNotInHand, match="Card 5 is not in your hand"):
        execute(state, c.Bid(seat=0, card=5))
    assert 5 not in state.hands[0]
    assert 9 not in state.hands[1]
    assert c.Bid(seat=0, card=5) not in legal_actions(state, 0)


def test_seat_0_bids_first_and_seat_1_cannot_see_its_card() -> None:
    _, state = started()
    assert state.to_move == 0
    assert legal_actions(state, 1) == []
    with pytest.raises(NotYourTurn):
        execute(state, c.Bid(seat=1, card=3))
    events, state = execute(state, c.Bid(seat=0, card=11))
    assert state.to_move == 1
    (sealed,) = events
    assert isinstance(sealed, e.BidSealed)
    assert sealed.card == 11
    for viewer in (1, None):
        shown = visible_event(sealed, viewer)
        assert isinstance(shown, e.BidSealed)
        assert shown.card == 0
        assert shown.cause is None
        assert view(state, viewer).seats[0].bid is None
        assert view(state, viewer).seats[0].has_bid
    assert view(state, 0).seats[0].bid == 11


def test_a_seat_bids_once_per_prize() -> None:
    _, state = started()
    _, state = execute(state, c.Bid(seat=0, card=4))
    with pytest.raises(AlreadyBid):
        execute(state, c.Bid(seat=0, card=6))
    assert legal_actions(state, 0) == []


def test_no_view_shows_a_pending_bid_to_another_seat() -> None:
    _, state = started()
    _, state = execute(state, c.Bid(seat=0, card=13))
    for viewer in (1, None):
        seen = view(state, viewer)
        assert 13 in seen.seats[0].cards  # the sealed card stays in the hand as shown
        assert seen.seats[0].bid is None
        assert not seen.seats[1].has_bid


def test_after_thirteen_turns_the_highest_total_wins() -> None:
    _, state = started()
    _, state = bids(state, *[(card, 14 - card) for card in range(1, 14)])
    assert state.phase == "final_scoring"
    assert state.to_move is None
    assert state.hands == ((), ())
    events, state = execute(state, c.FinishGame(seed=SEED))
    ended = events[-1]
    assert isinstance(ended, e.GameEnded)
    assert sum(state.scores) + sum(state.discarded) == sum(range(1, 14))
    best = max(state.scores)
    assert ended.winners == [seat for seat in (0, 1) if state.scores[seat] == best]
    assert ended.ranking[0] in ended.winners


def test_equal_totals_share_the_win() -> None:
    _, state = started(cards=3)
    _, state = bids(state, (1, 1), (2, 2), (3, 3))
    _, state = execute(state, c.FinishGame(seed=SEED))
    assert state.scores == (0, 0)
    assert (state.winners, state.ranking) == ((0, 1), (0, 1))


def test_a_short_game_has_as_many_turns_as_cards() -> None:
    _, state = started(cards=4)
    assert sorted(state.prizes) == [1, 2, 3, 4]
    assert state.hands[0] == (1, 2, 3, 4)
    with pytest.raises(CardNotInHand):
        execute(state, c.Bid(seat=0, card=5))
    events, state = bids(state, (1, 2), (2, 3), (3, 4), (4, 1))
    assert state.phase == "final_scoring"
    assert sum(isinstance(ev, e.PrizeRevealed) for ev in events) == 3


def test_the_end_reveals_the_seed_that_shuffled_the_prizes() -> None:
    _, state = started(cards=1)
    _, state = bids(state, (1, 1))
    with pytest.raises(WrongPhase):
        execute(state, c.Bid(seat=0, card=1))
    events, state = execute(state, c.FinishGame(seed=SEED, salt=""))
    ended = events[-1]
    assert isinstance(ended, e.GameEnded)
    assert ended.seed == SEED
    assert prize_deck(ended.seed, 1) == list(state.prizes)
    assert state.is_over
    assert view(state, 1).seed == SEED


def test_a_seed_that_does_not_match_the_commitment_is_refused() -> None:
    _, state = started(cards=1)
    _, state = bids(state, (1, 1))
    with pytest.raises(SeedMismatch):
        execute(state, c.FinishGame(seed="not the seed"))
    started_early = started(cards=2)[1]
    with pytest.raises(WrongPhase):
        execute(started_early, c.FinishGame(seed=SEED))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"players": 3}, "for 2 players"),
        ({"cards": 14}, "1 to 13 cards"),
        ({"cards": 0}, "1 to 13 cards"),
        ({"ties": "split"}, "discards or carries"),
        ({"seed": ""}, "needs a seed"),
        ({"game_id": ""}, "1 to 64 characters"),
    ],
)
def test_a_creation_out_of_the_rules_is_refused(fields: dict[str, object], message: str) -> None:
    command = c.CreateGame(**{"game_id": "g", "seed": "s", **fields})  # type: ignore[arg-type]  # each case's fields
    with pytest.raises(InvalidCommand, match=message):
        execute(None, command)


def test_nobody_bids_before_both_seats_are_taken_and_the_game_started() -> None:
    state = execute(None, c.CreateGame(game_id="g", seed="s"))[1]
    with pytest.raises(WrongPhase, match="not started"):
        execute(state, c.Bid(seat=0, card=1))
    with pytest.raises(WrongPhase, match="Both seats"):
        execute(state, c.StartGame())
    state = execute(state, c.JoinGame(seat=0, name="Ada"))[1]
    with pytest.raises(InvalidCommand, match="taken"):
        execute(state, c.JoinGame(seat=0, name="Bo"))


def test_a_resignation_loses_whatever_the_scores() -> None:
    _, state = started()
    _, state = bids(state, (13, 1))  # seat 0 leads
    _, state = execute(state, c.Bid(seat=0, card=5))
    events, state = execute(state, c.Resign(seat=0))
    assert isinstance(events[-1], e.PlayerResigned)
    assert state.phase == "final_scoring"
    assert state.to_move is None
    assert legal_actions(state, 1) == []
    events, state = execute(state, c.FinishGame(seed=SEED))
    ended = events[-1]
    assert isinstance(ended, e.GameEnded)
    assert state.scores[0] > state.scores[1]
    assert (ended.winners, ended.ranking) == ([1], [1, 0])
    with pytest.raises(WrongPhase, match="in play"):
        execute(state, c.Resign(seat=1))
