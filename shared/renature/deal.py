"""The deal, derived from the game seed only.

Shuffles use a documented, portable generator so that any implementation can reproduce a deal
from a revealed seed: the j-th random number for a purpose is the SHA-256 of
``"{seed}|{purpose}|{j}"`` read as a big-endian integer, and a list is shuffled by Fisher-Yates
from the last position down, swapping position i with ``number mod (i + 1)``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

from renature.board import Board
from renature.components import components
from renature.events import Deal

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


def shuffled(seed: str, purpose: str, items: Sequence[T]) -> list[T]:
    out = list(items)
    for j, i in enumerate(range(len(out) - 1, 0, -1)):
        digest = hashlib.sha256(f"{seed}|{purpose}|{j}".encode()).digest()
        k = int.from_bytes(digest, "big") % (i + 1)
        out[i], out[k] = out[k], out[i]
    return out


def deal(seed: str, players: int, board: Board) -> Deal:
    """Shuffle the 55 dominoes and deal each player their share (the rest go back unseen), then
    draw each player's hand of 3; shuffle the area tokens of each size into the areas of that
    size (the spares go back unseen)."""
    comps = components()
    per_player = comps.dominoes_per_player[players]
    order = shuffled(seed, "dominoes", range(len(comps.dominoes)))
    shares = [order[s * per_player : (s + 1) * per_player] for s in range(players)]
    hand = comps.hand_size
    area_tokens: dict[str, str] = {}
    spares: list[str] = []
    for size in sorted({t.size for t in board.tokens}):
        tokens = shuffled(seed, f"tokens-{size}", [t.id for t in board.tokens if t.size == size])
        areas = [a for a, s in zip(board.area_ids, board.area_sizes, strict=True) if s == size]
        area_tokens.update(zip(areas, tokens, strict=False))
        spares.extend(tokens[len(areas) :])
    return Deal(
        hands=[share[:hand] for share in shares],
        reserves=[share[hand:] for share in shares],
        box=order[players * per_player :],
        area_tokens=dict(sorted(area_tokens.items())),
        spare_tokens=sorted(spares),
    )
