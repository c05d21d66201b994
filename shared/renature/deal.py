"""The deal, derived from the game seed only.

Shuffles use the platform's documented, portable generator (`gameplatform.dealing`) so that any
implementation can reproduce a deal from a revealed seed: the j-th random number for a purpose
is the SHA-256 of ``"{seed}|{purpose}|{j}"`` read as a big-endian integer, and a list is
shuffled by Fisher-Yates from the last position down, swapping position i with
``number mod (i + 1)``.
"""

from __future__ import annotations

from gameplatform.dealing import SALTED, commitment
from gameplatform.dealing import portable_shuffle as shuffled
from renature.board import Board
from renature.components import components
from renature.events import Deal

__all__ = ["SALTED", "commitment", "deal", "shuffled"]
"""The seed commitment and the shuffle are the platform's (`gameplatform.dealing`), kept here
under their names; the deal itself is Renature's."""


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
