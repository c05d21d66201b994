"""Boards as data: the grid, its areas, starting spaces, clouds and area tokens.

A board file (``data/boards/<id>.toml``) holds an ASCII map plus metadata. This module parses it
into an immutable :class:`Board` with precomputed neighbours, validates it against the board
constraints of the rulings page, and exports it as JSON (schema: :class:`BoardJson`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import msgspec

from renature.components import _read_toml

OFF, PATH, AREA = 0, 1, 2
START, STUMP, PATH_CLOUD = "@", "^", "*"
PATH_CHARS = frozenset(".@^*")
BOARD_IDS: tuple[str, ...] = ("base", "valley", "valley-back")


@dataclass(frozen=True, slots=True)
class Token:
    """An area token: main points (= area size) and minor points on the front, secret back."""

    id: str
    size: int
    minor: int
    back: int

    @property
    def main(self) -> int:
        return self.size


@dataclass(frozen=True, slots=True)
class Board:
    id: str
    name: str
    variant: str
    path_name: str
    scoring: Literal["on_closing", "at_end"]
    reconstructed: bool
    width: int
    height: int
    kinds: tuple[int, ...]
    area_of: tuple[int, ...]
    area_ids: tuple[str, ...]
    area_sizes: tuple[int, ...]
    starts: frozenset[int]
    stumps: frozenset[int]
    clouds: tuple[int, ...]
    tokens: tuple[Token, ...]
    mushrooms: int
    cloud_tokens: int
    neighbours: tuple[tuple[int, ...], ...]

    def index(self, x: int, y: int) -> int:
        return y * self.width + x

    def xy(self, cell: int) -> tuple[int, int]:
        return cell % self.width, cell // self.width

    def contains(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    @property
    def cells(self) -> range:
        return range(self.width * self.height)

    def area_cells(self, area: int) -> list[int]:
        return [c for c in self.cells if self.area_of[c] == area]

    def token(self, token_id: str) -> Token:
        for token in self.tokens:
            if token.id == token_id:
                return token
        raise KeyError(token_id)


def parse_board(raw: dict[str, Any]) -> Board:
    rows = raw["map"].strip("\n").split("\n")
    height, width = len(rows), max(len(r) for r in rows)
    if any(len(r) != width for r in rows):
        raise ValueError(f"board {raw['id']}: the map is not rectangular")
    area_ids = tuple(raw.get("areas", {}))
    cells = _read_map(raw, rows, width, area_ids)
    for spot in raw.get("clouds", []):
        cells.clouds[spot["y"] * width + spot["x"]] += spot["count"]
    tokens = tuple(
        Token(id=t["id"], size=t["size"], minor=t.get("minor", t["size"] // 2), back=t["back"])
        for t in raw.get("tokens", [])
    )
    return Board(
        id=raw["id"],
        name=raw["name"],
        variant=raw["variant"],
        path_name=raw["path"],
        scoring=raw["scoring"],
        reconstructed=raw.get("reconstructed", False),
        width=width,
        height=height,
        kinds=tuple(cells.kinds),
        area_of=tuple(cells.area_of),
        area_ids=area_ids,
        area_sizes=tuple(raw["areas"][a] for a in area_ids),
        starts=frozenset(cells.starts),
        stumps=frozenset(cells.stumps),
        clouds=tuple(cells.clouds),
        tokens=tokens,
        mushrooms=raw.get("mushrooms", 0),
        cloud_tokens=raw["cloud_tokens"],
        neighbours=_neighbours(cells.kinds, width, height),
    )


@dataclass
class _MapCells:
    """What the map characters say of each cell (index ``y * width + x``)."""

    kinds: list[int] = field(default_factory=list)
    area_of: list[int] = field(default_factory=list)
    starts: set[int] = field(default_factory=set)
    stumps: set[int] = field(default_factory=set)
    clouds: list[int] = field(default_factory=list)


def _read_map(
    raw: dict[str, Any], rows: list[str], width: int, area_ids: tuple[str, ...]
) -> _MapCells:
    cells = _MapCells(clouds=[0] * (width * len(rows)))
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            cell = y * width + x
            if ch in PATH_CHARS:
                cells.kinds.append(PATH)
                cells.area_of.append(-1)
                if ch == START:
                    cells.starts.add(cell)
                elif ch == STUMP:
                    cells.stumps.add(cell)
                elif ch == PATH_CLOUD:
                    cells.clouds[cell] = 1
            elif ch.isalpha():
                if ch not in area_ids:
                    raise ValueError(f"board {raw['id']}: area {ch!r} has no printed size")
                cells.kinds.append(AREA)
                cells.area_of.append(area_ids.index(ch))
            elif ch == "#":
                cells.kinds.append(OFF)
                cells.area_of.append(-1)
            else:
                raise ValueError(f"board {raw['id']}: unknown map character {ch!r} at ({x}, {y})")
    return cells


def _neighbours(kinds: list[int], width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """Each cell's orthogonal neighbours on the board (off-board cells have none)."""
    return tuple(
        tuple(
            (y + dy) * width + (x + dx)
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= x + dx < width
            and 0 <= y + dy < height
            and kinds[(y + dy) * width + (x + dx)] != OFF
        )
        for y in range(height)
        for x in range(width)
    )


@cache
def load_board(board_id: str) -> Board:
    """The board shipped with the package under that id (``base``, ``valley``, ``valley-back``)."""
    if (
        board_id not in BOARD_IDS
        or not resources.files("renature").joinpath("data", "boards", f"{board_id}.toml").is_file()
    ):
        raise UnknownBoard(board_id)
    return parse_board(_read_toml("boards", f"{board_id}.toml"))


class UnknownBoard(KeyError):
    def __str__(self) -> str:
        return f"There is no board called {self.args[0]!r}; boards: {', '.join(BOARD_IDS)}"


def available_boards() -> list[str]:
    folder = resources.files("renature").joinpath("data", "boards")
    return [b for b in BOARD_IDS if folder.joinpath(f"{b}.toml").is_file()]


# --- validation -------------------------------------------------------------------------------


def _connected(cells: set[int], board: Board) -> bool:
    if not cells:
        return True
    seen, todo = set(), [next(iter(cells))]
    while todo:
        cell = todo.pop()
        if cell in seen:
            continue
        seen.add(cell)
        todo.extend(n for n in board.neighbours[cell] if n in cells)
    return seen == cells


def validate(board: Board) -> list[str]:
    """Every broken board constraint (rulings page, "Boards"), as sentences; empty when valid."""
    problems: list[str] = []
    path = {c for c in board.cells if board.kinds[c] == PATH}
    counted = Counter(a for a in board.area_of if a >= 0)
    for area, area_id in enumerate(board.area_ids):
        cells = set(board.area_cells(area))
        if counted[area] != board.area_sizes[area]:
            problems.append(
                f"area {area_id} is printed with size {board.area_sizes[area]} "
                f"but has {counted[area]} spaces"
            )
        if not _connected(cells, board):
            problems.append(f"area {area_id} is not one connected piece")
        if not any(n in path for c in cells for n in board.neighbours[c]):
            problems.append(f"area {area_id} does not touch the {board.path_name}")
    if not _connected(path, board):
        problems.append(f"the {board.path_name} is not one connected network")
    if len(path) < 110:
        problems.append(f"the {board.path_name} has {len(path)} spaces, fewer than 110")
    for cell in sorted(path):
        if not any(n in path for n in board.neighbours[cell]):
            problems.append(f"{board.path_name} space {board.xy(cell)} is isolated from the start")
    if len(board.starts) != 4:
        problems.append(f"there are {len(board.starts)} starting spaces, not 4")
    starts = [board.xy(c) for c in board.starts]
    for i, (x1, y1) in enumerate(starts):
        for x2, y2 in starts[i + 1 :]:
            if abs(x1 - x2) + abs(y1 - y2) < 6:
                problems.append(f"starting spaces {(x1, y1)} and {(x2, y2)} are not spread out")
    area_clouds = [c for c in board.cells if board.clouds[c] and board.kinds[c] == AREA]
    path_clouds = [c for c in board.cells if board.clouds[c] and board.kinds[c] == PATH]
    for cell in board.cells:
        if board.clouds[cell] and board.kinds[cell] == OFF:
            problems.append(f"cloud space {board.xy(cell)} is off the board")
    if board.variant == "base":
        problems += _validate_base(board, area_clouds, path_clouds)
    else:
        problems += _validate_valley(board, area_clouds, path_clouds)
    return problems


def _validate_base(board: Board, area_clouds: list[int], path_clouds: list[int]) -> list[str]:
    problems: list[str] = []
    sizes = board.area_sizes
    if len(sizes) != 18:
        problems.append(f"the base board has {len(sizes)} areas, not 18")
    if any(not 1 <= s <= 13 for s in sizes):
        problems.append("area sizes must lie between 1 and 13")
    if not {3, 7, 13} <= set(sizes):
        problems.append("the areas must include sizes 3, 7 and 13")
    if len(board.tokens) != 21:
        problems.append(f"there are {len(board.tokens)} area tokens, not 21")
    token_sizes = Counter(t.size for t in board.tokens)
    spares = token_sizes - Counter(sizes)
    if token_sizes - spares != Counter(sizes) or sorted(spares.elements()) != [3, 7, 13]:
        problems.append("the area tokens must match the area sizes, with spares of sizes 3, 7, 13")
    for size in token_sizes:
        backs = [t.back for t in board.tokens if t.size == size]
        if len(set(backs)) != len(backs):
            problems.append(f"area tokens of size {size} share a back value")
    if len({t.id for t in board.tokens}) != len(board.tokens):
        problems.append("area token ids are not unique")
    if len(area_clouds) != 4 or sum(board.clouds[c] for c in area_clouds) != 5:
        problems.append("the base board needs 4 cloud area spaces holding 5 clouds")
    if path_clouds or board.stumps:
        problems.append("the base board has no meadow clouds and no stumps")
    return problems


def _validate_valley(board: Board, area_clouds: list[int], path_clouds: list[int]) -> list[str]:
    problems: list[str] = []
    if board.tokens:
        problems.append("Valley boards have no area tokens")
    if len(board.stumps) != 8:
        problems.append(f"there are {len(board.stumps)} tree stumps, not 8")
    if any(n in board.stumps for stump in board.stumps for n in board.neighbours[stump]):
        # A domino covers one stump at most, so it gains one mushroom at most.
        problems.append("no two tree stumps may lie side by side")
    if board.mushrooms != 8:
        problems.append("the Valley expansion has 8 mushrooms")
    if any(s > 13 for s in board.area_sizes):
        problems.append("Valley areas must be small enough that mushrooms matter (13 at most)")
    wanted = (8, 0) if board.variant == "valley" else (0, 8)
    if (len(path_clouds), len(area_clouds)) != wanted:
        problems.append(
            f"the {board.variant} board needs {wanted[0]} meadow cloud spaces and "
            f"{wanted[1]} cloud area spaces"
        )
    if any(board.clouds[c] != 1 for c in path_clouds + area_clouds):
        problems.append("every Valley cloud space holds 1 cloud")
    return problems


# --- JSON export -------------------------------------------------------------------------------


class CellJson(msgspec.Struct, frozen=True):
    """One space of the board. Off-board positions are not listed."""

    x: int
    y: int
    kind: Literal["brook", "meadow", "area"]
    area: str | None = None
    start: bool = False
    stump: bool = False
    clouds: int = 0


class AreaJson(msgspec.Struct, frozen=True):
    id: str
    size: int
    cells: list[tuple[int, int]]


class SpaceJson(msgspec.Struct, frozen=True):
    x: int
    y: int
    count: int = 1


class TokenJson(msgspec.Struct, frozen=True):
    id: str
    main: int
    minor: int
    back: int


class BoardJson(msgspec.Struct, frozen=True):
    """A board as JSON: ``renature board show ID --json``. x grows right, y grows down."""

    id: str
    name: str
    variant: str
    scoring: str
    reconstructed: bool
    width: int
    height: int
    cells: list[CellJson]
    areas: list[AreaJson]
    starts: list[SpaceJson]
    clouds: list[SpaceJson]
    stumps: list[SpaceJson]
    tokens: list[TokenJson]
    mushrooms: int


def board_json(board: Board) -> BoardJson:
    cells = []
    for cell in board.cells:
        kind = board.kinds[cell]
        if kind == OFF:
            continue
        x, y = board.xy(cell)
        area = board.area_of[cell]
        cells.append(
            CellJson(
                x=x,
                y=y,
                kind="area" if kind == AREA else board.path_name,  # type: ignore[arg-type]
                area=board.area_ids[area] if area >= 0 else None,
                start=cell in board.starts,
                stump=cell in board.stumps,
                clouds=board.clouds[cell],
            )
        )

    def spaces(cells: Any) -> list[SpaceJson]:
        return [SpaceJson(*board.xy(c), count=board.clouds[c] or 1) for c in sorted(cells)]

    return BoardJson(
        id=board.id,
        name=board.name,
        variant=board.variant,
        scoring=board.scoring,
        reconstructed=board.reconstructed,
        width=board.width,
        height=board.height,
        cells=cells,
        areas=[
            AreaJson(
                id=a, size=board.area_sizes[i], cells=[board.xy(c) for c in board.area_cells(i)]
            )
            for i, a in enumerate(board.area_ids)
        ],
        starts=[SpaceJson(*board.xy(c)) for c in sorted(board.starts)],
        clouds=spaces(c for c in board.cells if board.clouds[c]),
        stumps=[SpaceJson(*board.xy(c)) for c in sorted(board.stumps)],
        tokens=[TokenJson(id=t.id, main=t.main, minor=t.minor, back=t.back) for t in board.tokens],
        mushrooms=board.mushrooms,
    )
