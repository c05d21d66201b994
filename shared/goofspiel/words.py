"""Goofspiel's commands and events in its players' words (the web client's moves and log, the
explanation's notes). Words are made of the item alone: pass what the reader may see (a sealed
bid blanked for another seat is told as a card laid face down)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gameplatform.words import phrased, seat_name
from goofspiel.state import SEALED

NAMES = {1: "ace", 11: "jack", 12: "queen", 13: "king"}


def card(number: int) -> str:
    """A card as a player says it: ``the 7``, ``the queen (12)``."""
    name = NAMES.get(number)
    return f"the {name} ({number})" if name else f"the {number}"


def _cards(numbers: Sequence[int]) -> str:
    return " + ".join(str(number) for number in numbers) or "nothing"


def _seats(seats: Sequence[int], names: Sequence[str]) -> str:
    return " and ".join(str(seat_name(seat, names)) for seat in seats) or "nobody"


def _revealed(item: Any, seats: Sequence[str]) -> str:
    bids = f"the bids are {item.bids[0]} and {item.bids[1]}"
    if item.winner is not None:
        return f"{bids}: {seat_name(item.winner, seats)} takes {_cards(item.pot)} for {item.points}"
    fate = "discarded" if item.discarded else "carried over to the next prize"
    return f"{bids}: a tie, {_cards(item.pot)} is {fate}"


def _timed_out(item: Any, seats: Sequence[str]) -> str:
    if item.on_timeout == "bot":
        return "ran out of time: a bot bids for this seat from now on (the lowest card)"
    return "ran out of time and loses the game"


PHRASES: dict[str, Callable[[Any, Sequence[str]], str]] = {
    # commands
    "Bid": lambda i, s: f"bid {card(i.card)}",
    "Resign": lambda i, s: "resign (the other player wins)",
    "ReclaimSeat": lambda i, s: "take your seat back from the bot",
    "LeaveGame": lambda i, s: "leave the game",
    "RemovePlayer": lambda i, s: f"free seat {i.seat} ({seat_name(i.seat, s)})",
    "CancelGame": lambda i, s: "cancel the game",
    "ClaimTimeout": lambda i, s: f"claim that {seat_name(i.seat, s)}'s time is up",
    # events
    "GameCreated": lambda i, s: (
        f"game created: {i.cards} turns, a tie "
        + ("discards the prize" if i.ties == "discard" else "carries the prize over")
    ),
    "PlayerJoined": lambda i, s: f"{i.name} took seat {i.seat} ({seat_name(i.seat, s)})",
    "PlayerLeft": lambda i, s: (
        "left the game" if i.reason == "left" else "was removed from the game by the host"
    ),
    "GameCancelled": lambda i, s: "the host cancelled the game",
    "GameStarted": lambda i, s: "the game started",
    "PrizeRevealed": lambda i, s: (
        f"turn {i.turn}: the prize is {card(i.prize)}"
        + (f", the pot {_cards(i.pot)}" if len(i.pot) > 1 else "")
    ),
    "BidSealed": lambda i, s: (
        "laid a card face down" if i.card == SEALED else f"bid {card(i.card)}, face down"
    ),
    "BidsRevealed": _revealed,
    "PlayerResigned": lambda i, s: "resigned: the other player wins",
    "SeatTimedOut": _timed_out,
    "SeatReclaimed": lambda i, s: "took the seat back from the bot",
    "GameEnded": lambda i, s: (
        "the game ended: "
        + ", ".join(f"{seat_name(n, s)} {score}" for n, score in enumerate(i.scores))
        + f"; winner(s): {_seats(i.winners, s)}"
    ),
}

_SUBJECT = frozenset({"PlayerLeft", "BidSealed", "PlayerResigned", "SeatTimedOut", "SeatReclaimed"})
"""Events told with their seat as the subject (``Hearts ran out of time ...``); a command is
the reader's own move, told without one (``Bid the 7``)."""


def describe(item: Any, seats: Sequence[str]) -> str:
    """A Goofspiel command or event in words; ``seats`` names the seats (their suits)."""
    return phrased(item, seats, PHRASES, _SUBJECT)
