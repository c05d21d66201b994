"""``renature ... --game renaissance``: simulate, corpus, audit, explain and replay."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gameplatform import get_game
from gameserver.cli import app

ROOT = Path(__file__).resolve().parents[3]
runner = CliRunner()


def test_simulate_prints_the_outcome_of_the_platform_game() -> None:
    result = runner.invoke(
        app,
        ["simulate", "--game", "renaissance", "--seed", "cli", "--bots", "greedy,random", "--json"],
    )
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.output)
    _, state, _ = get_game("renaissance").simulate("cli", ["greedy", "random"])
    assert outcome["scores"] == get_game("renaissance").table(state).scores
    assert outcome["game"] == "renaissance"
    table = runner.invoke(app, ["simulate", "--game", "renaissance", "--seed", "cli"])
    assert table.exit_code == 0
    assert "Renaissance" in table.output


def test_simulate_refuses_a_player_count_the_game_does_not_have() -> None:
    result = runner.invoke(app, ["simulate", "--game", "renaissance", "--players", "3"])
    assert result.exit_code != 0
    result = runner.invoke(app, ["simulate", "--game", "chess"])
    assert result.exit_code != 0
    assert "unknown game" in result.output


def test_a_simulated_game_passes_the_audit_and_a_forged_one_fails(tmp_path: Path) -> None:
    events = tmp_path / "game.jsonl"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--game",
            "renaissance",
            "--seed",
            "audit",
            "--sets",
            "2",
            "--events",
            str(events),
        ],
    )
    assert result.exit_code == 0, result.output
    audited = runner.invoke(
        app, ["audit", "--game", "renaissance", "--events", str(events), "--json"]
    )
    assert audited.exit_code == 0, audited.output
    assert json.loads(audited.output)["ok"] is True
    lines = events.read_text().splitlines()
    del lines[40]  # an event dropped
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(lines) + "\n")
    failed = runner.invoke(app, ["audit", "--game", "renaissance", "--events", str(forged)])
    assert failed.exit_code == 1
    assert "FAILS" in failed.output
    explained = runner.invoke(app, ["explain", "--game", "renaissance", "--events", str(events)])
    assert explained.exit_code == 0
    assert "(winner)" in explained.output
    svg = tmp_path / "board.svg"
    shown = runner.invoke(
        app,
        [
            "replay",
            "--game",
            "renaissance",
            "--events",
            str(events),
            "--to",
            "60",
            "--svg",
            str(svg),
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert svg.read_text().startswith("<svg")


def test_corpus_check_agrees_with_the_published_renaissance_corpus(tmp_path: Path) -> None:
    published = ROOT / "docs" / "corpus-renaissance.jsonl"
    result = runner.invoke(app, ["corpus", "--game", "renaissance", "--check", str(published)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("12 of 12 games agree")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        published.read_text().splitlines()[0].replace('"scores":[', '"scores":[1') + "\n"
    )
    result = runner.invoke(app, ["corpus", "--game", "renaissance", "--check", str(broken)])
    assert result.exit_code == 1
