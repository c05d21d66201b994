"""Dealing from a secret seed, the same for every game: the commitment to the seed published at
creation, and the portable shuffle that deals from it (any implementation can reproduce a deal
from a revealed seed).

The j-th random number for a purpose is the SHA-256 of ``"{seed}|{purpose}|{j}"`` read as a
big-endian integer; a list is shuffled by Fisher-Yates from the last position down, swapping
position i with ``number mod (i + 1)``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

SALTED = "hmac-sha256:"
"""The label of a salted commitment (what the services publish for every game they create)."""


def commitment(seed: str, salt: str = "") -> str:
    """The commitment to a seed, published at creation and checked when the seed is revealed.

    With a ``salt`` (the services draw 256 random bits per game and reveal them with the seed):
    ``"hmac-sha256:"`` and the hex HMAC-SHA256 of the seed keyed with the salt, so that nobody
    can test candidate seeds against the commitment before the end, however small the seed (a
    chosen seed such as ``731337`` included). Without a salt (in-process simulations, whose
    seed is public anyway, and games recorded before salts): the bare hex SHA-256 of the seed,
    which a short seed does not hide.
    """
    if not salt:
        return hashlib.sha256(seed.encode()).hexdigest()
    return SALTED + hmac.new(salt.encode(), seed.encode(), hashlib.sha256).hexdigest()


def portable_shuffle(seed: str, purpose: str, items: Sequence[T]) -> list[T]:
    """``items`` shuffled for ``purpose`` from ``seed``: Fisher-Yates from the last position
    down, the j-th swap taking position ``sha256("{seed}|{purpose}|{j}") mod (i + 1)``."""
    out = list(items)
    for j, i in enumerate(range(len(out) - 1, 0, -1)):
        digest = hashlib.sha256(f"{seed}|{purpose}|{j}".encode()).digest()
        k = int.from_bytes(digest, "big") % (i + 1)
        out[i], out[k] = out[k], out[i]
    return out
