"""Scoring: Phase 1's points (1 per polyomino and the hands its pieces make) and Phase 2's
penalty for pieces left unplaced."""

from __future__ import annotations

from renaissance.components import (
    components,
)


def hands_made(pieces: tuple[int, ...] | list[int]) -> list[tuple[str, int]]:
    """(hand, points) for every hand the pieces make ("The points are accumulated")."""
    comps = components()
    tags: dict[str, int] = {}
    for piece in pieces:
        for tag in comps.pieces[piece].tags:
            tags[tag] = tags.get(tag, 0) + 1
    out = []
    for hand in comps.hands:
        if all(tags.get(tag, 0) >= n for tag, n in hand.needs):
            points = hand.points + hand.per_piece * tags.get(hand.counted, 0)
            out.append((hand.name, points))
    return out


def phase1_points(pieces: tuple[int, ...] | list[int]) -> int:
    """1 point per polyomino plus the hands."""
    return len(pieces) + sum(points for _, points in hands_made(pieces))


def penalty(pieces: tuple[int, ...] | list[int]) -> int:
    """Phase 2: 2 per domino, 3 per triomino, 4 per tetromino left unplaced."""
    return sum(components().pieces[p].size for p in pieces)
