"""The two sides of the Valley board as data (rulings page, "Valley expansion" and "Boards").

Both sides share one map (R): four meadow rows with lanes between them, 33 small areas in bands
along the meadow, ponds, stumps and the front's meadow cloud spaces where the rows cross the
lanes. The right edge of the front side, x = 19 to 23::

    .NN##     y = 3      N (3 spaces)
    .#N##     y = 4
    @...^     y = 5      (21, 5) touches N and T
    .#TT#     y = 6      T (4)
    .#TT#     y = 7
    *^...     y = 8      (22, 8) touches T and b; the stump (20, 8) lies two spaces away
    .##b#     y = 9      b (3)
    .#bb#     y = 10
    ^...*     y = 11     (21, 11) touches b and g
    ##g##     y = 12     g (3)
    ##gg#     y = 13
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from renature.board import AREA, PATH, Board, load_board, parse_board, validate
from support.boards import areas_beside

VALLEY_BOARDS = ("valley", "valley-back")


def meadow(board: Board) -> set[int]:
    return {cell for cell in board.cells if board.kinds[cell] == PATH}


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_both_sides_of_the_valley_board_pass_the_board_validator(board_id: str) -> None:
    assert validate(load_board(board_id)) == []


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_a_valley_board_is_a_reconstructed_meadow_board_scored_at_the_end(board_id: str) -> None:
    board = load_board(board_id)

    assert (board.id, board.variant) == (board_id, board_id)
    assert board.path_name == "meadow"
    assert board.scoring == "at_end"
    assert board.reconstructed
    assert board.tokens == ()
    assert board.mushrooms == 8
    assert board.cloud_tokens == 32  # 30 of the base game + 2 of the expansion


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_the_meadow_is_one_network_large_enough_for_the_dominoes(board_id: str) -> None:
    board = load_board(board_id)
    spaces = meadow(board)

    assert len(spaces) >= 110
    assert all(any(n in spaces for n in board.neighbours[cell]) for cell in spaces)


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_the_areas_are_small_enough_that_mushrooms_matter(board_id: str) -> None:
    board = load_board(board_id)
    sizes = board.area_sizes

    assert sum(sizes) >= 100  # room for the plants
    assert max(sizes) <= 13
    assert sum(1 for size in sizes if 2 <= size <= 7) >= 0.8 * len(sizes)
    for area in range(len(sizes)):
        cells = board.area_cells(area)
        assert len(cells) == sizes[area]
        assert any(board.kinds[n] == PATH for c in cells for n in board.neighbours[c])


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_four_ponds_spread_over_the_board_are_the_starting_spaces(board_id: str) -> None:
    board = load_board(board_id)
    ponds = [board.xy(cell) for cell in sorted(board.starts)]

    assert len(ponds) == 4
    for i, (x1, y1) in enumerate(ponds):
        for x2, y2 in ponds[i + 1 :]:
            assert abs(x1 - x2) + abs(y1 - y2) >= 6


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_eight_tree_stumps_lie_apart_on_the_meadow_near_an_area(board_id: str) -> None:
    board = load_board(board_id)
    spaces = meadow(board)

    assert len(board.stumps) == 8
    assert board.stumps <= spaces
    assert not board.stumps & board.starts
    for stump in board.stumps:
        assert not any(n in board.stumps for n in board.neighbours[stump])
        # A mushroom gained there usually has somewhere to go close by.
        assert any(n in spaces and areas_beside(board, n) for n in board.neighbours[stump])


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_mushrooms_can_join_two_or_three_areas(board_id: str) -> None:
    board = load_board(board_id)
    touching = [len(areas_beside(board, cell)) for cell in meadow(board)]

    assert sum(1 for n in touching if n >= 2) >= 20
    assert sum(1 for n in touching if n == 3) >= 3


def test_the_front_has_eight_meadow_spaces_with_one_cloud_and_no_cloud_area_spaces() -> None:
    board = load_board("valley")
    clouds = [cell for cell in board.cells if board.clouds[cell]]

    assert len(clouds) == 8
    assert all(board.kinds[cell] == PATH and board.clouds[cell] == 1 for cell in clouds)
    assert not set(clouds) & (board.starts | board.stumps)


def test_the_back_has_eight_area_spaces_with_one_cloud_and_no_meadow_clouds() -> None:
    board = load_board("valley-back")
    clouds = [cell for cell in board.cells if board.clouds[cell]]

    assert len(clouds) == 8
    assert all(board.kinds[cell] == AREA and board.clouds[cell] == 1 for cell in clouds)
    # Planting there takes the cloud: every cloud area space lies beside the meadow.
    assert all(any(board.kinds[n] == PATH for n in board.neighbours[c]) for c in clouds)


def test_the_back_shares_the_front_map_apart_from_the_clouds() -> None:
    front, back = load_board("valley"), load_board("valley-back")

    assert (front.width, front.height) == (back.width, back.height)
    assert front.kinds == back.kinds
    assert front.area_of == back.area_of
    assert (front.area_ids, front.area_sizes) == (back.area_ids, back.area_sizes)
    assert (front.starts, front.stumps) == (back.starts, back.stumps)


@pytest.mark.parametrize("board_id", VALLEY_BOARDS)
def test_four_areas_on_the_right_edge_can_grow_into_the_rule_books_area_of_16(
    board_id: str,
) -> None:
    # German rule book: a mushroom joins two areas, each already two joined areas, into an area
    # of 16 spaces on the right edge. Here N, T, b and g (13 spaces) plus three mushrooms.
    board = load_board(board_id)

    def area_at(x: int, y: int) -> str:
        return board.area_ids[board.area_of[board.index(x, y)]]

    def joins(x: int, y: int) -> set[str]:
        return {board.area_ids[a] for a in areas_beside(board, board.index(x, y))}

    assert [board.area_sizes[board.area_ids.index(a)] for a in "NTbg"] == [3, 4, 3, 3]
    assert {area_at(21, 3), area_at(21, 6), area_at(22, 9), area_at(21, 12)} == set("NTbg")
    assert joins(21, 5) == {"N", "T"}
    assert joins(22, 8) == {"T", "b"}
    assert joins(21, 11) == {"b", "g"}
    assert board.index(20, 8) in board.stumps


def test_the_validator_catches_two_stumps_side_by_side() -> None:
    """A domino covers one stump at most, so one mushroom per domino is all the rules need."""
    text = resources.files("renature").joinpath("data", "boards", "valley.toml").read_text()
    raw = tomllib.loads(text)
    rows = [list(row) for row in raw["map"].strip("\n").split("\n")]
    assert (rows[2][4], rows[2][5], rows[2][14]) == ("^", ".", "^")
    rows[2][5], rows[2][14] = "^", "."  # still 8 stumps, two of them side by side
    raw["map"] = "\n".join("".join(row) for row in rows)

    assert validate(parse_board(raw)) == ["no two tree stumps may lie side by side"]
