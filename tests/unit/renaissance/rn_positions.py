"""Positions for the Renaissance rule tests, drawn as the rule book's figures are.

A test starts a real game (CreateGame, both seats, StartGame), then lays out the position it
needs by replacing parts of the immutable state, and gives commands through the real
``execute``. Seat 0 plays Silver and seat 1 Gold (the first set).

Boards are 7 rows of 7 characters, x growing right and y down; (3, 3) is the centre ``#``:
- pieces: ``.`` free, ``m`` a monomino, a capital letter a polyomino named in the legend;
- markers: ``.`` none, ``s`` silver, ``g`` gold (``#`` or anything else at the centre).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import TypeVar

from msgspec.structs import replace

from renaissance import commands as c
from renaissance import events as e
from renaissance.components import CENTRE, EMPTY, MONOMINO, components
from renaissance.game import setup_commands
from renaissance.position import piece_index
from renaissance.rules import execute
from renaissance.state import GameState

K = TypeVar("K", bound=e.Event)

SILVER_SEAT, GOLD_SEAT = 0, 1


def new_game(sets: int = 1, competition: str = "points") -> GameState:
    state: GameState | None = None
    for command in setup_commands("g", "seed", ["silver", "gold"], sets, competition):
        state = execute(state, command)[1]
    assert state is not None
    return state


def rows(diagram: str) -> list[str]:
    lines = [line.strip() for line in textwrap.dedent(diagram).strip().splitlines()]
    assert len(lines) == 7, diagram
    assert all(len(line) == 7 for line in lines), diagram
    return lines


def cover_of(diagram: str, legend: Mapping[str, str]) -> tuple[int, ...]:
    cover = []
    for y, line in enumerate(rows(diagram)):
        for x, ch in enumerate(line):
            if (x, y) == (3, 3):
                cover.append(CENTRE)
            elif ch == ".":
                cover.append(EMPTY)
            elif ch == "m":
                cover.append(MONOMINO)
            else:
                cover.append(piece_index(legend[ch]))
    return tuple(cover)


def markers_of(diagram: str) -> tuple[int, ...]:
    out = []
    for y, line in enumerate(rows(diagram)):
        for x, ch in enumerate(line):
            out.append({"s": 0, "g": 1}.get(ch, -1) if (x, y) != (3, 3) else -1)
    return tuple(out)


ALL_MONOMINOES = """
    mmmmmmm
    mmmmmmm
    mmmmmmm
    mmm#mmm
    mmmmmmm
    mmmmmmm
    mmmmmDD
"""
"""Monominoes everywhere but one domino (D) in the bottom-right corner, so Phase 1 goes on."""
DEFAULT_LEGEND = {"D": "domino-1"}
NO_MARKERS = """
    .......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""


def phase1(
    pieces: str = ALL_MONOMINOES,
    markers: str = NO_MARKERS,
    legend: Mapping[str, str] | None = None,
    *,
    to_move: int = GOLD_SEAT,
    supply: tuple[int, int] | None = None,
    acquired: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> GameState:
    """A Phase 1 position; ``supply`` defaults to 24 less the markers on the board."""
    board = markers_of(markers)
    if supply is None:
        per = components().markers
        supply = (per - board.count(0), per - board.count(1))
    return replace(
        new_game(),
        phase="phase1",
        current=to_move,
        pool=(),
        cover=cover_of(pieces, legend or DEFAULT_LEGEND),
        markers=board,
        supply=supply,
        acquired=(
            tuple(piece_index(p) for p in acquired[0]),
            tuple(piece_index(p) for p in acquired[1]),
        ),
    )


def setup(
    pieces: str,
    legend: Mapping[str, str],
    *,
    to_move: int = SILVER_SEAT,
    pool: tuple[str, ...] | None = None,
) -> GameState:
    """A set-up position: the pieces not drawn are in the common supply (or ``pool``)."""
    cover = cover_of(pieces, legend)
    on_board = {p for p in cover if p >= 0}
    left = (
        tuple(piece_index(p) for p in pool)
        if pool is not None
        else tuple(p.index for p in components().pieces if p.index not in on_board)
    )
    return replace(new_game(), phase="setup", current=to_move, cover=cover, pool=left)


def phase2(
    pieces: str,
    markers: str,
    legend: Mapping[str, str] | None = None,
    *,
    hands: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    to_move: int = GOLD_SEAT,
    step: str = "phase2",
    last_move: tuple[tuple[int, int], tuple[int, int]] | None = None,
) -> GameState:
    comps = components()
    return replace(
        new_game(),
        phase=step,
        current=to_move,
        pool=(),
        cover=cover_of(pieces, legend or {}),
        markers=markers_of(markers),
        hands=(
            tuple(piece_index(p) for p in hands[0]),
            tuple(piece_index(p) for p in hands[1]),
        ),
        last_move=(comps.square(*last_move[0]), comps.square(*last_move[1])) if last_move else None,
    )


def sq(x: int, y: int) -> c.Square:
    return c.Square(x, y)


def squares(*cells: tuple[int, int]) -> list[c.Square]:
    return [c.Square(x, y) for x, y in cells]


def play(state: GameState, command: c.Command) -> tuple[list[e.Event], GameState]:
    return execute(state, command)


def of_type(events: list[e.Event], kind: type[K]) -> list[K]:
    return [ev for ev in events if isinstance(ev, kind)]


def drawn_markers(state: GameState) -> str:
    """The markers of a state as a diagram (to compare with the expected one)."""
    lines = []
    for y in range(7):
        line = ""
        for x in range(7):
            m = state.markers[y * 7 + x]
            line += "#" if (x, y) == (3, 3) else {0: "s", 1: "g"}.get(m, ".")
        lines.append(line)
    return "\n".join(lines)


def diagram(text: str) -> str:
    return "\n".join(rows(text))
