"""The areas of a board as play changes them: their spaces now (Valley mushrooms add spaces and
merge areas), which still count, and when one is closed off (ruling 6)."""

from __future__ import annotations

from functools import lru_cache

from renature.geometry import geometry
from renature.placement import is_free_path
from renature.state import GameState


def area_cells(state: GameState, area: int) -> tuple[int, ...]:
    """The spaces of an area now (Valley mushrooms add spaces and merge areas)."""
    board = state.board
    if board.mushrooms == 0:
        return geometry(board.id).area_cells[area]
    return _cells_by_area(state.area_of).get(area, ())


@lru_cache(maxsize=1024)
def _cells_by_area(area_of: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """Each area's spaces, found in one pass over the board (a Valley board's areas change only
    when a mushroom is placed, while every area's plants are totalled in a view and in final
    scoring: a pass over the board for each area was a tenth of a Valley view's time)."""
    cells: dict[int, list[int]] = {}
    for cell, area in enumerate(area_of):
        if area >= 0:
            cells.setdefault(area, []).append(cell)
    return {area: tuple(spaces) for area, spaces in cells.items()}


def live_areas(state: GameState) -> list[int]:
    return [a for a, size in enumerate(state.area_sizes) if size > 0]


def is_isolated(state: GameState, cell: int) -> bool:
    """A free brook space with no free brook space beside it: no domino can ever cover it."""
    return not any(is_free_path(state, n) for n in state.board.neighbours[cell])


def is_closed(state: GameState, area: int) -> bool:
    """Closed off: every brook space beside the area is covered or isolated (ruling 6)."""
    for cell in geometry(state.board_id).area_border[area]:
        if state.cover[cell] < 0 and not is_isolated(state, cell):
            return False
    return True


def areas_closed_by(state: GameState, cells: tuple[int, ...]) -> list[int]:
    """Areas still holding their token that are closed now and that covering ``cells`` could
    have closed (only a domino changes the brook)."""
    closable = geometry(state.board_id).closable_by
    candidates = sorted({a for cell in cells for a in closable.get(cell, ())})
    return [a for a in candidates if state.area_tokens[a] is not None and is_closed(state, a)]
