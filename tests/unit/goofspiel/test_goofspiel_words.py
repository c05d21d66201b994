"""Goofspiel's commands and events in its players' words (the moves and the log of the web
client, the explanation's notes), the seats' comings and goings among them."""

from __future__ import annotations

import msgspec
from gs_clocks import clocked, run

from gameplatform.words import words
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.adapter import GAME
from goofspiel.explain import explain
from goofspiel.picture import board_svg, board_text
from goofspiel.rules import execute
from goofspiel.view import COLOURS, visible_event

SEATS = list(COLOURS)


def said(item: msgspec.Struct) -> str:
    return words(GAME, item, SEATS)


def test_a_seats_commands_are_told_as_its_own_moves() -> None:
    assert said(c.Bid(seat=0, card=12)) == "Bid the queen (12)."
    assert said(c.Bid(seat=1, card=7)) == "Bid the 7."
    assert said(c.ReclaimSeat(seat=1)) == "Take your seat back from the bot."
    assert said(c.Resign(seat=0)) == "Resign (the other player wins)."


def test_the_lobbys_events_are_told_in_a_players_words() -> None:
    _, state = execute(None, c.CreateGame(game_id="g", seed="s", cards=5, ties="carry"))
    joined, state = execute(state, c.JoinGame(seat=1, name="Bo"))
    left, state = execute(state, c.LeaveGame(seat=1))
    _, state = execute(state, c.JoinGame(seat=0, name="Ada"))
    removed, state = execute(state, c.RemovePlayer(seat=0))
    cancelled, _ = execute(state, c.CancelGame())
    created = e.GameCreated(
        game_id="g", version=1, players=2, cards=5, ties="carry", seed_commitment="", prizes=[]
    )
    assert said(created) == "Game created: 5 turns, a tie carries the prize over."
    assert said(joined[0]) == "Bo took seat 1 (hearts)."
    assert said(left[0]) == "Hearts left the game."
    assert said(removed[0]) == "Spades was removed from the game by the host."
    assert said(cancelled[0]) == "The host cancelled the game."


def test_timeouts_bots_and_a_seat_taken_back_are_told_and_explained() -> None:
    log, state = clocked(per_turn=30, on_timeout="bot", cards=3)
    timed_out, state = run(log, state, c.ClaimTimeout(seat=0), 31)
    reclaimed, state = run(log, state, c.ReclaimSeat(seat=0), 32)
    assert said(timed_out[0]) == (
        "Spades ran out of time: a bot bids for this seat from now on (the lowest card)."
    )
    assert said(visible_event(timed_out[1], 1)) == "Spades laid a card face down."
    assert said(visible_event(timed_out[1], 0)) == "Spades bid the ace (1), face down."
    assert said(reclaimed[0]) == "Spades took the seat back from the bot."
    revealed, state = run(log, state, c.Bid(seat=1, card=3), 33)
    assert said(revealed[1]).startswith("The bids are 1 and 3: hearts takes ")
    _, state = run(log, state, c.Resign(seat=0), 34)
    told = explain(log)
    assert told.notes == [
        f"Event {timed_out[0].version}: {said(timed_out[0])}",
        f"Event {reclaimed[0].version}: Spades took the seat back from the bot.",
        f"Event {log[-1].version}: Spades resigned: the other player wins.",
    ]
    assert "(a bot bids)" not in board_text(state)
    assert "resigned" in board_text(state)
    assert "resigned" in board_svg(state)


def test_a_removed_seat_is_told_and_drawn() -> None:
    log, state = clocked(per_turn=30, on_timeout="remove", cards=3)
    timed_out, state = run(log, state, c.ClaimTimeout(seat=0), 31)
    assert said(timed_out[0]) == "Spades ran out of time and loses the game."
    assert "(removed)" in board_text(state)
