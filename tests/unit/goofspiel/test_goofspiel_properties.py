"""Invariants over whole bot games (hypothesis draws the seed, the bots, the number of cards and
the tie rule): the cards are conserved, the scores are the awards' sum, replay equals the live
state, the audit holds, and no view, live event or seat state shows a sealed bid to anyone but
its seat (nor the order of the face-down prizes): what another viewer sees is the same
whatever card was sealed."""

from __future__ import annotations

import random
import string
from collections import Counter
from functools import cache

import msgspec
from gs_clocks import T0, clocked
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from gameplatform.clock import epoch_ms, iso
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.adapter import GAME
from goofspiel.audit import audit
from goofspiel.errors import RuleError
from goofspiel.explain import explain
from goofspiel.game import plays, replay
from goofspiel.rules import execute, legal_actions
from goofspiel.state import NO_BID, GameState
from goofspiel.view import view, visible_event

GAMES = settings(max_examples=25, deadline=None)
seeds = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=10)
bots = st.tuples(st.sampled_from(["random", "greedy"]), st.sampled_from(["random", "greedy"]))
cards = st.integers(min_value=1, max_value=13)
ties = st.sampled_from(["discard", "carry"])
whole_games = st.tuples(seeds, bots, cards, ties)
Drawn = tuple[str, tuple[str, str], int, str]


@cache
def played(
    seed: str, names: tuple[str, str], count: int, tie: str
) -> tuple[list[e.Event], list[GameState]]:
    """A whole game and the state after every bid and after the end."""
    options = c.Options(cards=count, ties=tie)  # type: ignore[arg-type]  # hypothesis draws the ties
    log: list[e.Event] = []
    states: list[GameState] = []
    for events, state in plays(seed, names, options):
        log += events
        if state.phase != "lobby":
            states.append(state)
    return log, states[1:]  # from the first bid on


def suit(state: GameState) -> list[int]:
    return list(range(1, state.cards + 1))


@GAMES
@given(whole_games)
def test_cards_are_conserved_after_every_command(drawn: Drawn) -> None:
    _, states = played(*drawn)
    for state in states:
        for seat in (0, 1):
            assert sorted(state.hands[seat] + state.shown[seat]) == suit(state)
        pot = state.pot if state.phase == "bidding" else ()
        prizes = Counter([*state.won[0], *state.won[1], *state.discarded, *pot])
        prizes.update(state.prizes[state.turn :] if state.phase == "bidding" else ())
        assert sorted(prizes.elements()) == suit(state)
    assert states[-1].hands == ((), ())


@GAMES
@given(whole_games)
def test_replay_equals_the_live_state_and_the_audit_holds(drawn: Drawn) -> None:
    log, states = played(*drawn)
    assert replay(log) == states[-1]
    assert [e.decode(e.encode(event)) for event in log] == log
    awarded = [0, 0]
    for event in log:
        for seat, points, _ in e.points_awarded(event):
            awarded[seat] += points
    assert tuple(awarded) == states[-1].scores
    report = audit(log)
    assert report.ok, report.findings
    assert report.scores == list(states[-1].scores)
    assert explain(log).scores == report.scores


def _sealed_with(state: GameState, card: int) -> GameState:
    """The same state with another card under the seal of the seat that has bid."""
    seat = next(s for s, bid in enumerate(state.bids) if bid != NO_BID)
    return replace(state, bids=tuple(card if s == seat else b for s, b in enumerate(state.bids)))


@GAMES
@given(whole_games)
def test_no_view_leaks_the_other_seats_pending_bid(drawn: Drawn) -> None:
    log, states = played(*drawn)
    pending = [state for state in states if state.phase == "bidding" and state.bids[0] != NO_BID]
    assert len(pending) == drawn[2]  # seat 0 bids first every turn
    for state in pending:
        others = [card for card in state.hands[0] if card != state.bids[0]]
        for viewer in (1, None):
            seen = view(state, viewer)
            assert seen.seats[0].bid is None
            assert seen.seats[0].has_bid
            assert seen.prizes_left == sorted(seen.prizes_left)
            for card in others:
                twin = _sealed_with(state, card)
                assert view(twin, viewer) == seen
                assert GAME.state_json(twin, viewer) == GAME.state_json(state, viewer)
        assert view(state, 0).seats[0].bid == state.bids[0]
    for event in log:
        if isinstance(event, e.BidSealed):
            assert event.seat is not None
            for viewer in (1 - event.seat, None):
                shown = visible_event(event, viewer)
                assert shown == visible_event(replace(event, card=99, cause=None), viewer)
        if isinstance(event, e.GameCreated):
            assert visible_event(event, 0).prizes == []


@GAMES
@given(whole_games)
def test_a_seat_state_hides_the_prize_order_until_the_end(drawn: Drawn) -> None:
    _, states = played(*drawn)
    for state in states[:-1]:
        for viewer in (0, 1, None):
            seen = GAME.decode_state(GAME.state_json(state, viewer))
            assert seen.prizes[: state.turn] == state.prizes[: state.turn]
            assert list(seen.prizes[state.turn :]) == sorted(state.prizes[state.turn :])
            assert GAME.table(seen) == GAME.table(state)
            assert GAME.legal_actions(seen, seen.to_move or 0) == GAME.legal_actions(
                state, state.to_move or 0
            )
    assert GAME.decode_state(GAME.state_json(states[-1], 1)) == states[-1]


@GAMES
@given(whole_games)
def test_decide_accepts_exactly_the_legal_bids(drawn: Drawn) -> None:
    _, states = played(*drawn)
    for state in states:
        for seat in (0, 1):
            legal = legal_actions(state, seat)
            for card in range(1, 14):
                bid = c.Bid(seat=seat, card=card)
                try:
                    execute(state, bid)
                except RuleError:
                    assert bid not in legal
                else:
                    assert bid in legal


def test_the_same_seed_and_bots_play_the_same_game() -> None:
    first, _ = played("same", ("random", "random"), 13, "discard")
    again = GAME.simulate("same", ["random", "random"])[0]
    assert msgspec.json.encode(first) == msgspec.json.encode(again)


odds = st.tuples(
    st.integers(min_value=0, max_value=60),
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=60),
)
"""The odds in a hundred that a step of a clocked game is a timeout claimed at the deadline, a
resignation, a seat taken back from the bot (where a bot plays one); a bid otherwise."""


def next_command(
    state: GameState, chances: tuple[int, int, int], rng: random.Random
) -> tuple[c.Command, bool]:
    """The command of a step, and whether it is claimed at the running seat's deadline."""
    seat = state.to_move
    assert seat is not None
    bots = [s for s in (0, 1) if state.statuses[s] == "bot"]
    timeout, resign, reclaim = chances
    if rng.randrange(100) < timeout:
        return c.ClaimTimeout(seat=seat), True
    if rng.randrange(100) < resign:
        return c.Resign(seat=rng.choice((0, 1))), False
    if bots and rng.randrange(100) < reclaim:
        return c.ReclaimSeat(seat=bots[0]), False
    return rng.choice(legal_actions(state, seat)), False


@GAMES
@given(seeds, cards, st.sampled_from(["bot", "remove"]), odds)
def test_whole_games_with_random_timeouts_and_resignations_end_with_consistent_scores(
    seed: str, count: int, on_timeout: str, chances: tuple[int, int, int]
) -> None:
    log, state = clocked(on_timeout, count, seed, total=60, increment=2)
    rng, now = random.Random(seed), epoch_ms(T0)
    while state.phase == "bidding":
        command, at_deadline = next_command(state, chances, rng)
        clock = GAME.clock(state)
        assert clock is not None
        now = clock.deadline_ms if at_deadline and clock.deadline_ms else now + 1500
        events, state = execute(state, command, time=iso(now))
        log += events
    events, state = execute(state, c.FinishGame(seed=seed), time=iso(now + 1))
    log += events
    assert state.is_over
    report = audit(log)
    assert report.ok, report.findings
    awarded = [0, 0]
    for event in log:
        for seat, points, _ in e.points_awarded(event):
            awarded[seat] += points
    assert list(state.scores) == awarded == explain(log).scores
    out = state.resigned
    if out is not None:
        assert (state.winners, state.ranking) == ((1 - out,), (1 - out, out))
        assert state.statuses[out] in ("resigned", "removed")
    else:
        assert state.winners == tuple(s for s in (0, 1) if state.scores[s] == max(state.scores))
        assert sorted([*state.won[0], *state.won[1], *state.discarded]) == suit(state)
    assert replay(log) == state
