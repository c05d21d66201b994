"""What Goofspiel needs of the platform that ``gameplatform`` does not offer yet, written once.

Meant for the platform: the seed commitment and the portable shuffle that deal from a secret
seed (Renature has its own in ``renature.deal``), and a bot that plays any legal action. Nothing
here knows Goofspiel; when the platform offers these, this module is replaced by imports.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
SALTED = "hmac-sha256:"


def commitment(seed: str, salt: str = "") -> str:
    """The commitment to a seed published at creation: the hex SHA-256 of the seed, or with a
    salt ``hmac-sha256:`` and the HMAC-SHA256 of the seed keyed with the salt (so that a short
    seed cannot be guessed from it before the end)."""
    if salt:
        mac = hmac.new(salt.encode(), seed.encode(), hashlib.sha256)
        return SALTED + mac.hexdigest()
    return hashlib.sha256(seed.encode()).hexdigest()


def portable_shuffle(seed: str, purpose: str, items: Sequence[T]) -> list[T]:
    """Fisher-Yates from the last position down; the j-th swap takes position
    ``sha256("{seed}|{purpose}|{j}") mod (i + 1)`` (big-endian), reproducible anywhere."""
    deck = list(items)
    positions = range(len(deck) - 1, 0, -1)
    for draw, position in enumerate(positions):
        number = int.from_bytes(hashlib.sha256(f"{seed}|{purpose}|{draw}".encode()).digest())
        other = number % (position + 1)
        deck[position], deck[other] = deck[other], deck[position]
    return deck


class RandomBot:
    """Any legal action, uniformly, from the bot's own seeded generator."""

    def __init__(self, seed: str, legal_actions: Callable[[Any, int], list[Any]]) -> None:
        self.rng = random.Random(seed)
        self._legal_actions = legal_actions

    def choose(self, state: Any, seat: int) -> Any:
        return self.rng.choice(self._legal_actions(state, seat))
