"""One CLI path for every hosted game: what a game does not take is refused (and nothing is
written), and the dispute tools read a file's game from its first event, without ``--game``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gameplatform import game_names, get_game
from gameserver.cli import app
from support.hosting import replayed

runner = CliRunner()


def said(args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, args)
    return result.exit_code, " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--game", "renaissance", "--competition", "foo"], ("competition", "renaissance")),
        (["--game", "renaissance", "--sets", "0"], ("sets",)),
        (["--game", "renaissance", "--board", "valley"], ("valley", "standard")),
        (["--game", "renature", "--sets", "2"], ("sets", "renature")),
        (["--game", "renature", "--competition", "points"], ("competition", "renature")),
        (["--game", "renature", "--option", "time_control=3"], ("time_control",)),
        (["--game", "renature", "--option", "colour=red"], ("colour", "renature")),
        (["--game", "renature", "--players", "5"], ("2, 3, 4",)),
    ],
)
def test_simulate_refuses_what_the_game_does_not_take(
    tmp_path: Path, args: list[str], words: tuple[str, ...]
) -> None:
    events = tmp_path / "events.jsonl"
    code, output = said(["simulate", *args, "--events", str(events)])
    assert code == 2, output
    for word in words:
        assert word in output, output
    assert not events.exists()  # refused before anything was played or written


def test_simulate_takes_each_games_options() -> None:
    code, output = said(["simulate", "--game", "renaissance", "--option", "sets=2", "--json"])
    assert code == 0, output
    assert json.loads(output)["game"] == "renaissance"
    code, output = said(["simulate", "--players", "2", "--board", "valley", "--json"])
    assert code == 0, output
    assert json.loads(output)["board"] == "valley"


@pytest.fixture(scope="module", params=game_names())
def game_file(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    path = tmp_path_factory.mktemp(request.param) / "game.jsonl"
    code, output = said(["simulate", "--game", request.param, "--events", str(path)])
    assert code == 0, output
    return request.param, path


def test_the_dispute_tools_read_a_files_game_from_its_first_event(
    game_file: tuple[str, Path], tmp_path: Path
) -> None:
    name, path = game_file
    code, output = said(["audit", "--events", str(path)])
    assert (code, "holds" in output) == (0, True), output
    code, output = said(["explain", "--events", str(path)])
    assert code == 0, output
    game = get_game(name)
    events = [game.decode_event(line) for line in path.read_bytes().splitlines()]
    colours = game.table(replayed(game, events)).colours
    assert "1. seat" not in output  # seats are named by their colours
    assert any(f"1. {colour}:" in output for colour in colours), output
    assert not re.search(r"\d\. \S+: 1 points", output)  # one point, many points
    picture = tmp_path / "board.svg"
    step = len(events) // 2  # a position in the middle of the game, whatever its length
    code, output = said(["replay", "--events", str(path), "--to", str(step), "--svg", str(picture)])
    assert code == 0, output
    assert f"After event {step} (" in output
    assert picture.read_text().startswith("<svg")
    other = next(n for n in game_names() if n != name)
    code, output = said(["audit", "--events", str(path), "--game", other])
    assert code == 2
    assert f"holds a {name} game, not a {other} game" in output


def test_a_file_of_no_hosted_game_is_a_clear_error(tmp_path: Path) -> None:
    chess = tmp_path / "chess.jsonl"
    chess.write_text('{"type": "GameCreated", "game_id": "g", "version": 1, "variant": "chess"}\n')
    for tool in ("audit", "explain", "replay"):
        code, output = said([tool, "--events", str(chess)])
        assert code == 2, output
        assert "is no game hosted here" in output
        for name in game_names():
            assert name in output
