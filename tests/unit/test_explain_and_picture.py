"""Where every point came from (``renature explain``) and the board as a picture (SVG).

The explanation is what a player reads in a dispute over the score: every line is one award of
the rule book (starting score, plant points, area scorings, clouds, plants left, token backs),
and the lines of a seat must add up to exactly its final score. The picture must be a valid SVG
that shows every domino and every plant on the board, at the end and in mid-game.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import cache

import pytest

from renature import events as e
from renature.components import COLOURS, PLANT_TYPES, plant_colour, plant_type
from renature.explain import explain
from renature.game import play, replay
from renature.picture import board_svg
from renature.state import GameState

SVG = "{http://www.w3.org/2000/svg}"
GAMES = [
    (2, "base", ["greedy", "random"]),
    (3, "base", ["random", "greedy", "greedy"]),
    (4, "base", ["greedy"] * 4),
    (2, "valley", ["greedy", "greedy"]),
    (3, "valley-back", ["greedy", "random", "greedy"]),
]
RULES = {"starting score", "plant points", "area scoring", "clouds", "plants left", "token backs"}


@cache
def game(players: int, board: str, bots: tuple[str, ...]) -> tuple[tuple[e.Event, ...], GameState]:
    log, state = play(players, f"explain-{players}-{board}", list(bots), board=board)
    return tuple(log), state


def finished(players: int, board: str, bots: list[str]) -> tuple[list[e.Event], GameState]:
    log, state = game(players, board, tuple(bots))
    return list(log), state


# -- the explanation -----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "board", "bots"), GAMES)
def test_every_seats_points_add_up_to_its_final_score(
    players: int, board: str, bots: list[str]
) -> None:
    log, state = finished(players, board, bots)
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    report = explain(log)
    assert report.game_id == state.game_id
    assert report.scores == ended.scores == [s.score for s in state.seats]
    assert report.ranking == ended.ranking
    assert report.winners == ended.winners
    assert report.tiebreak == ended.tiebreak
    assert report.colours == [COLOURS[s.colour] for s in state.seats]
    for seat in range(players):
        lines = [line for line in report.lines if line.seat == seat]
        assert sum(line.points for line in lines) == ended.scores[seat]
        assert lines[-1].total == ended.scores[seat]
        running = 0
        for line in lines:
            running += line.points
            assert line.total == running
            assert line.colour == report.colours[seat]
            assert line.colour in line.text
            assert line.rule in RULES
            assert line.turn >= 1
        assert lines[0].rule == "starting score"
    assert [line.version for line in report.lines] == sorted(line.version for line in report.lines)


@pytest.mark.parametrize(("players", "board", "bots"), GAMES[:2])
def test_one_seats_explanation_is_its_lines_of_the_whole(
    players: int, board: str, bots: list[str]
) -> None:
    log, state = finished(players, board, bots)
    whole = explain(log)
    for seat in range(players):
        mine = explain(log, seat)
        assert mine.lines == [line for line in whole.lines if line.seat == seat]
        assert sum(line.points for line in mine.lines) == state.seats[seat].score
        assert mine.lines[-1].total == state.seats[seat].score
        assert mine.scores == whole.scores


def test_each_line_is_one_award_of_an_event() -> None:
    log, _ = finished(3, "base", ["random", "greedy", "greedy"])
    report = explain(log)
    by_version = {ev.version: ev for ev in log}
    awards = [(ev.version, *award) for ev in log for award in e.points_awarded(ev)]
    assert [(line.version, line.seat, line.points) for line in report.lines] == [
        (version, seat, points) for version, seat, points, _ in awards
    ]
    for line in report.lines:
        event = by_version[line.version]
        if isinstance(event, e.PlantPlaced):
            assert line.rule == "plant points"
            assert f"{event.colour} {event.plant} in area {event.area}" in line.text
        if isinstance(event, e.AreaScored):
            assert line.rule == "area scoring"
            assert f"Area {event.area} ({event.size} spaces)" in line.text
            when = "at the end of the game" if event.final else "when it was closed off"
            assert when in line.text


def test_the_explanation_of_a_game_in_progress_matches_its_current_scores() -> None:
    log, _ = finished(2, "base", ["greedy", "random"])
    part = log[: len(log) // 2]
    state = replay(part)
    assert state is not None
    assert not state.is_over
    report = explain(part)
    for seat, seat_state in enumerate(state.seats):
        assert sum(line.points for line in report.lines if line.seat == seat) == seat_state.score
    assert report.winners == []
    assert report.tiebreak == []


# -- the picture ---------------------------------------------------------------------------------


def assert_picture_shows(state: GameState) -> ET.Element:
    """Well-formed SVG with one domino group per placed domino and one circle per plant."""
    root = ET.fromstring(board_svg(state))
    assert root.tag == f"{SVG}svg"
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "domino"]
    assert sorted(int(g.get("data-domino", "-1")) for g in groups) == sorted(
        domino for domino, _, _ in state.dominoes
    )
    plants = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "plant"]
    on_board = [
        (COLOURS[plant_colour(code)], PLANT_TYPES[plant_type(code)])
        for code in state.plants
        if code >= 0
    ]
    assert sorted((c.get("data-colour"), c.get("data-plant")) for c in plants) == sorted(on_board)
    scores = "".join(root.itertext())
    for seat in state.seats:
        assert f"{COLOURS[seat.colour]} {seat.score}" in scores
    return root


@pytest.mark.parametrize(("players", "board", "bots"), GAMES)
def test_the_picture_of_a_finished_game_shows_every_domino_and_plant(
    players: int, board: str, bots: list[str]
) -> None:
    _, state = finished(players, board, bots)
    assert state.dominoes
    assert any(code >= 0 for code in state.plants)
    assert_picture_shows(state)


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9])
def test_the_picture_in_mid_game_shows_what_is_on_the_board_then(fraction: float) -> None:
    log, _ = finished(*GAMES[3])  # a Valley game: mushrooms and stumps on the board too
    number = max(5, int(len(log) * fraction))
    state = replay(log[:number])
    assert state is not None
    assert state.version == number
    assert_picture_shows(state)


def test_the_picture_escapes_its_title() -> None:
    _, state = finished(2, "base", ["greedy", "random"])
    root = ET.fromstring(board_svg(state, title='A <dispute> & "quotes"'))
    title = root.find(f"{SVG}title")
    assert title is not None
    assert title.text == 'A <dispute> & "quotes"'
