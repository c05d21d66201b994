"""Bots: ``random`` (any card in hand) and ``greedy`` (the card that matches the prize).

Both are deterministic given their seed; their only randomness is their own ``random.Random``.
A bot sees what its seat may see (it never reads the other seat's sealed bid).
"""

from __future__ import annotations

from gameplatform import interface
from gameplatform.simulation import RandomBot
from goofspiel import commands as c
from goofspiel.rules import legal_actions
from goofspiel.state import GameState

BOT_NAMES = ("random", "greedy")


Bot = interface.Bot[GameState, c.Command]


class GreedyBot:
    """Bids the card equal to the pot's value (the classic "match the prize" play), else the
    lowest card above it; a pot worth more than its best card gets the best card. It needs no
    randomness (its seed is kept for the interface)."""

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def choose(self, state: GameState, seat: int) -> c.Command:
        hand = sorted(state.hands[seat])
        worth = sum(state.pot)
        above = [card for card in hand if card >= worth]
        card = above[0] if above else hand[-1]
        return c.Bid(seat=seat, card=card)


def make_bot(name: str, seed: str) -> Bot:
    if name == "random":
        return RandomBot(seed, legal_actions)
    if name == "greedy":
        return GreedyBot(seed)
    raise ValueError(f"unknown bot {name!r}; bots: {', '.join(BOT_NAMES)}")
