"""The corpus of recorded games (docs/corpus.jsonl) that other implementations test against."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from gameserver.cli import app
from renature import commands as c
from renature import corpus

CORPUS = Path(__file__).resolve().parents[2] / "docs" / "corpus.jsonl"


@cache
def published() -> list[corpus.CorpusGame]:
    decoder = msgspec.json.Decoder(corpus.CorpusGame)
    return [decoder.decode(line) for line in CORPUS.read_bytes().splitlines()]


def test_the_published_corpus_is_what_this_implementation_records() -> None:
    """Regenerate it with `renature corpus > docs/corpus.jsonl` when a rule changes on purpose."""
    recorded = [corpus.record(*game) for game in corpus.GAMES]
    assert published() == recorded


def test_the_corpus_covers_every_board_player_count_and_kind_of_action() -> None:
    games = published()
    assert {(g.board, g.players) for g in games} == {
        (board, players) for board in ("base", "valley", "valley-back") for players in (2, 3, 4)
    }
    kinds = {
        (type(command).__name__, getattr(command, "kind", None))
        for game in games
        for command in game.commands
    }
    assert {
        ("PlaceDomino", None),
        ("DiscardDomino", None),
        ("PlacePlant", None),
        ("SkipPlant", None),
        ("EndTurn", None),
        ("CloudAction", "change_joker"),
        ("CloudAction", "extra_turn"),
        ("CloudAction", "return_plant"),
        ("PlaceMushroom", None),
    } <= kinds
    assert all(len(g.legal_actions) == len(g.commands) for g in games)


@pytest.mark.parametrize("number", range(len(corpus.GAMES)))
def test_every_corpus_game_replays_as_recorded(number: int) -> None:
    assert corpus.check(published()[number]) == []


def test_a_difference_is_named_with_the_command_where_it_appears() -> None:
    game = published()[0]
    counts = list(game.legal_actions)
    counts[9] += 1
    assert corpus.check(msgspec.structs.replace(game, legal_actions=counts)) == [
        f"command 10: seat {game.commands[9].seat} has {counts[9] - 1} legal actions, "
        f"not {counts[9]}"
    ]
    scores = [s + 1 for s in game.scores]
    (problem,) = corpus.check(msgspec.structs.replace(game, scores=scores))
    assert problem.startswith("(events, scores, ranking)")
    winners = [s for s in range(game.players) if s not in game.winners]
    assert corpus.check(msgspec.structs.replace(game, winners=winners)) == [
        f"winners {game.winners}, not {winners}"
    ]
    early_end = msgspec.structs.replace(
        game, commands=game.commands[:-1], legal_actions=game.legal_actions[:-1]
    )
    (problem,) = corpus.check(early_end)
    assert problem.startswith("a recorded command is refused")


def test_a_command_the_rules_refuse_fails_the_check() -> None:
    game = published()[0]
    commands = list(game.commands)
    commands[0] = c.EndTurn(seat=commands[0].seat)  # step A comes first
    (problem,) = corpus.check(msgspec.structs.replace(game, commands=commands))
    assert problem == (
        "a recorded command is refused: Place or discard a domino before ending your turn."
    )


def test_the_check_command_exits_1_when_a_game_differs(tmp_path: Path) -> None:
    lines = CORPUS.read_bytes().splitlines()[:2]
    good, changed = tmp_path / "good.jsonl", tmp_path / "changed.jsonl"
    good.write_bytes(b"\n".join(lines) + b"\n")
    game = published()[1]
    scores = msgspec.structs.replace(game, scores=[s - 1 for s in game.scores])
    changed.write_bytes(lines[0] + b"\n" + msgspec.json.encode(scores) + b"\nnot json\n")
    runner = CliRunner()

    agreed = runner.invoke(app, ["corpus", "--check", str(good)])
    differed = runner.invoke(app, ["corpus", "--check", str(changed)])

    assert (agreed.exit_code, agreed.stdout) == (0, "2 of 2 games agree\n")
    assert differed.exit_code == 1
    assert "line 2 (" in differed.stdout
    assert "line 3: not a corpus game" in differed.stdout
    assert differed.stdout.endswith("1 of 3 games agree\n")
