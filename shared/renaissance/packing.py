"""Whether pieces still fit: the question behind the set-up's relocation (ruling 4).

``can_pack(free, counts)`` answers whether the pieces counted by shape can all be laid, rotated
or flipped and without overlap, on the free squares (a bit mask). The search fills the lowest
free square first, either with a piece or by leaving it for a monomino, and remembers every
position it has settled (a pure function of its arguments, so the memo cannot change a result).
"""

from __future__ import annotations

from functools import cache, lru_cache

from renaissance.components import components, mask, placements


@cache
def _by_lowest() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each shape and square, the masks of its placements whose lowest square that is."""
    comps = components()
    table = []
    for shape in range(len(comps.shapes)):
        rows: list[list[int]] = [[] for _ in range(comps.squares)]
        for squares in placements(shape):
            rows[squares[0]].append(mask(squares))
        table.append(tuple(tuple(r) for r in rows))
    return tuple(table)


@cache
def _sizes() -> tuple[int, ...]:
    return tuple(len(shape) for shape in components().shapes)


@lru_cache(maxsize=1 << 17)
def can_pack(free: int, counts: tuple[int, ...]) -> bool:
    """Can every piece counted in ``counts`` (by shape index) be laid on the ``free`` squares?"""
    need = sum(n * size for n, size in zip(counts, _sizes(), strict=True))
    spare = free.bit_count() - need
    if spare < 0:
        return False
    if need == 0:
        return True
    return _search(free, counts, spare)


@lru_cache(maxsize=1 << 18)
def _search(free: int, counts: tuple[int, ...], spare: int) -> bool:
    if not any(counts):
        return True
    low = free & -free
    square = low.bit_length() - 1
    table = _by_lowest()
    for shape, left in enumerate(counts):
        if not left:
            continue
        fewer = (*counts[:shape], left - 1, *counts[shape + 1 :])
        for bits in table[shape][square]:
            if bits & free == bits and _search(free ^ bits, fewer, spare):
                return True
    return spare > 0 and _search(free ^ low, counts, spare - 1)


def shape_counts(pieces: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    comps = components()
    counts = [0] * len(comps.shapes)
    for piece in pieces:
        counts[comps.pieces[piece].shape_index] += 1
    return tuple(counts)
