"""The base board as data: the validator accepts it and catches broken copies; the JSON export
lists every space (rulings page, "Components" and "Boards")."""

from __future__ import annotations

import copy
import tomllib
from collections import Counter
from importlib import resources
from typing import Any

import msgspec
import pytest

from renature.board import AREA, OFF, PATH, board_json, load_board, parse_board, validate


def base_data() -> dict[str, Any]:
    """The raw data of the base board, as read from its TOML file (a fresh copy each time)."""
    text = resources.files("renature").joinpath("data", "boards", "base.toml").read_text()
    return copy.deepcopy(tomllib.loads(text))


def redraw(raw: dict[str, Any], cells: dict[tuple[int, int], str]) -> dict[str, Any]:
    """The board data with some map characters replaced: ``{(x, y): "#"}``."""
    rows = [list(row) for row in raw["map"].strip("\n").split("\n")]
    for (x, y), ch in cells.items():
        rows[y][x] = ch
    raw["map"] = "\n".join("".join(row) for row in rows)
    return raw


def problems_of(raw: dict[str, Any]) -> list[str]:
    return validate(parse_board(raw))


# --- the base board ------------------------------------------------------------------------------


def test_the_base_board_passes_the_validator() -> None:
    assert validate(load_board("base")) == []


def test_the_base_board_has_18_areas_with_sizes_from_1_to_13_including_3_7_and_13() -> None:
    board = load_board("base")

    assert len(board.area_ids) == 18
    assert all(1 <= size <= 13 for size in board.area_sizes)
    assert {3, 7, 13} <= set(board.area_sizes)
    for index, size in enumerate(board.area_sizes):
        assert len(board.area_cells(index)) == size


def test_the_base_board_has_4_starting_spaces_on_the_brook() -> None:
    board = load_board("base")

    assert len(board.starts) == 4
    assert all(board.kinds[cell] == PATH for cell in board.starts)


def test_the_base_board_has_4_cloud_area_spaces_holding_2_1_1_1_clouds_of_30() -> None:
    board = load_board("base")
    clouds = [board.clouds[cell] for cell in board.cells if board.clouds[cell]]

    assert sorted(clouds) == [1, 1, 1, 2]
    assert all(board.kinds[cell] == AREA for cell in board.cells if board.clouds[cell])
    assert board.cloud_tokens == 30


def test_the_21_area_tokens_match_the_area_sizes_and_the_3_spares_are_sizes_3_7_and_13() -> None:
    board = load_board("base")
    tokens = Counter(token.main for token in board.tokens)

    assert len(board.tokens) == 21
    assert sorted((tokens - Counter(board.area_sizes)).elements()) == [3, 7, 13]
    assert not Counter(board.area_sizes) - tokens
    for token in board.tokens:
        assert token.minor == token.main // 2


def test_the_brook_has_at_least_110_spaces_and_every_area_touches_it() -> None:
    board = load_board("base")
    brook = {cell for cell in board.cells if board.kinds[cell] == PATH}

    assert len(brook) >= 110
    for index in range(len(board.area_ids)):
        assert any(n in brook for c in board.area_cells(index) for n in board.neighbours[c])


def test_neighbours_are_orthogonal_and_on_the_board() -> None:
    board = load_board("base")
    corner = board.index(0, 4)  # brook on the left edge

    assert sorted(board.xy(n) for n in board.neighbours[corner]) == [(0, 3), (0, 5), (1, 4)]
    assert board.xy(board.index(5, 6)) == (5, 6)
    assert board.index(6, 6) not in board.neighbours[board.index(5, 6)]  # (6, 6) is off


# --- broken copies -------------------------------------------------------------------------------


def test_the_validator_catches_an_area_printed_with_the_wrong_size() -> None:
    raw = base_data()
    raw["areas"]["H"] = 2

    problems = problems_of(raw)

    assert any("area H is printed with size 2 but has 1 spaces" in p for p in problems)


def test_the_validator_catches_a_brook_in_two_pieces() -> None:
    # Cutting (4, 11) leaves (4, 12) and (5, 12) on their own.
    problems = problems_of(redraw(base_data(), {(4, 11): "#"}))

    assert problems == ["the brook is not one connected network"]


def test_the_validator_catches_too_few_brook_spaces() -> None:
    # The dead end at the top (13..15, 0) and (13, 1) removed: 113 - 4 = 109 spaces.
    raw = redraw(base_data(), {(13, 0): "#", (14, 0): "#", (15, 0): "#", (13, 1): "#"})

    problems = problems_of(raw)

    assert problems == ["the brook has 109 spaces, fewer than 110"]


def test_the_validator_catches_an_area_token_that_fits_no_area() -> None:
    raw = base_data()
    raw["tokens"][0]["size"] = 12

    problems = problems_of(raw)

    assert any("area tokens must match the area sizes" in p for p in problems)


def test_the_validator_catches_a_missing_starting_space() -> None:
    raw = redraw(base_data(), {(4, 2): "."})

    assert any("3 starting spaces" in p for p in problems_of(raw))


def test_the_validator_catches_an_area_cut_off_from_the_brook() -> None:
    # Area H is the single space (5, 5); wall in its three brook neighbours.
    raw = redraw(base_data(), {(5, 4): "#", (4, 5): "#", (5, 6): "#"})

    assert any("area H does not touch the brook" in p for p in problems_of(raw))


def test_the_parser_rejects_an_area_letter_without_a_printed_size() -> None:
    raw = redraw(base_data(), {(5, 5): "Z"})

    with pytest.raises(ValueError, match="no printed size"):
        parse_board(raw)


# --- JSON export ---------------------------------------------------------------------------------


def test_the_board_json_lists_every_space_with_x_y_kind_and_area() -> None:
    board = load_board("base")

    data = msgspec.json.decode(msgspec.json.encode(board_json(board)))

    cells = {(cell["x"], cell["y"]): cell for cell in data["cells"]}
    assert len(cells) == len(data["cells"])
    on_board = [cell for cell in board.cells if board.kinds[cell] != OFF]
    assert sorted(cells) == sorted(board.xy(cell) for cell in on_board)
    for index in on_board:
        cell = cells[board.xy(index)]
        if board.kinds[index] == AREA:
            assert (cell["kind"], cell["area"]) == ("area", board.area_ids[board.area_of[index]])
        else:
            assert (cell["kind"], cell["area"]) == ("brook", None)
        assert cell["start"] == (index in board.starts)
    assert (data["width"], data["height"]) == (board.width, board.height)
    assert {(s["x"], s["y"]) for s in data["starts"]} == {board.xy(c) for c in board.starts}
    assert [a["size"] for a in data["areas"]] == list(board.area_sizes)
    assert sum(cloud["count"] for cloud in data["clouds"]) == 5
    assert len(data["tokens"]) == 21


def test_the_board_json_agrees_with_the_map_drawing() -> None:
    board = load_board("base")
    rows = base_data()["map"].strip("\n").split("\n")

    for cell in board_json(board).cells:
        ch = rows[cell.y][cell.x]
        assert ch == (cell.area if cell.kind == "area" else ("@" if cell.start else "."))
