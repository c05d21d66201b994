"""The audit catches what a dishonest server could do (a changed bid, a forged prize deck, a
wrong seed); the explanation, the pictures, the options and the published corpus."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from gameplatform.chain import seal
from goofspiel import commands as c
from goofspiel import corpus
from goofspiel import events as e
from goofspiel.adapter import GAME, options_of
from goofspiel.audit import audit
from goofspiel.explain import explain
from goofspiel.game import play, replay
from goofspiel.picture import board_svg, board_text
from goofspiel.rules import execute, prize_deck

CORPUS = Path(__file__).resolve().parents[3] / "docs" / "corpus-goofspiel.jsonl"


def resealed(log: list[e.Event], at: int, changed: e.Event) -> list[e.Event]:
    """The log with one event changed and the chain recomputed after it (a forger's best)."""
    out = log[:at]
    prev = out[-1].hash if out else ""
    for event in [changed, *log[at + 1 :]]:
        out.append(seal(event, prev))
        prev = out[-1].hash
    return out


def test_a_whole_game_audits_from_its_events_alone() -> None:
    log, state = play("audit", ["greedy", "random"])
    report = audit(log)
    assert report.ok
    assert report.finished
    assert "prize deck reproduced from seed" in report.checks
    assert (report.scores, report.winners) == (list(state.scores), list(state.winners))


def test_the_audit_catches_a_changed_bid_even_with_the_chain_recomputed() -> None:
    log, _ = play("audit", ["greedy", "random"])
    at = next(i for i, ev in enumerate(log) if isinstance(ev, e.BidsRevealed))
    revealed = log[at]
    assert isinstance(revealed, e.BidsRevealed)
    forged = replace(revealed, bids=[revealed.bids[0], 13], winner=1)
    assert not audit([*log[:at], forged, *log[at + 1 :]]).ok  # the chain breaks
    report = audit(resealed(log, at, forged))
    assert not report.ok
    assert report.first_bad is not None
    assert (report.first_bad.version, report.first_bad.check) == (revealed.version, "rules")


def test_the_audit_catches_a_forged_prize_deck() -> None:
    log, _ = play("audit", ["greedy", "random"])
    created = log[0]
    assert isinstance(created, e.GameCreated)
    report = audit(resealed(log, 0, replace(created, prizes=sorted(created.prizes))))
    assert report.first_bad is not None
    assert (report.first_bad.version, report.first_bad.check) == (1, "rules")
    assert "prizes" in report.first_bad.message


def test_the_audit_names_a_revealed_seed_that_breaks_the_commitment() -> None:
    log, _ = play("audit", ["greedy", "random"])
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    report = audit(resealed(log, len(log) - 1, replace(ended, seed="another seed")))
    assert report.first_bad is not None
    assert report.first_bad.check == "seed"
    assert "does not match the commitment" in report.first_bad.message


def test_an_unfinished_game_audits_without_its_seed() -> None:
    log, _ = play("audit", ["greedy", "random"])
    cut = next(i for i in range(20, len(log)) if log[i].cause is not None)  # a whole batch
    report = audit(log[:cut])
    assert report.ok
    assert not report.finished
    assert audit([]).first_bad is not None


def test_the_explanation_adds_up_to_the_scores_pot_by_pot() -> None:
    log, state = play("explain", ["greedy", "greedy"], c.Options(ties="carry"))
    told = explain(log)
    assert told.scores == list(state.scores)
    assert sum(line.points for line in told.lines) == sum(state.scores)
    assert all(line.text.startswith(f"turn {line.turn}: ") for line in told.lines)
    assert {line.seat for line in explain(log, 1).lines} <= {1}
    assert told.discarded == list(state.discarded)


def test_the_pictures_show_the_table_and_no_sealed_card() -> None:
    log, _ = play("picture", ["random", "random"])
    middle = replay(log[:6])  # seat 0 has sealed a bid
    assert middle is not None
    assert middle.bids[0] > 0
    svg = board_svg(middle, "a <game>")
    assert svg.startswith("<svg")
    assert "a &lt;game&gt;" in svg
    assert "(bid)" in svg
    assert "has bid" in board_text(middle)
    assert GAME.picture_text(middle) == board_text(middle)


def test_options_are_validated_and_unknown_ones_refused() -> None:
    assert options_of(None) == c.Options(cards=13, ties="discard")
    assert options_of({"cards": 5, "ties": "carry"}) == c.Options(cards=5, ties="carry")
    for wrong, named in (({"sets": 1}, "sets"), ({"cards": 14}, "cards"), ({"ties": "x"}, "ties")):
        with pytest.raises(msgspec.ValidationError, match=named):
            options_of(wrong)
    created = GAME.create_command("g", 2, None, {"cards": 7})
    assert isinstance(created, c.CreateGame)
    assert (created.cards, created.ties, created.seed) == (7, "discard", "")


def test_the_short_game_deals_the_short_suit() -> None:
    log, state = play("short", ["greedy", "random"], c.Options(cards=5))
    assert sorted(state.prizes) == [1, 2, 3, 4, 5] == sorted(prize_deck("short", 5))
    assert sum(isinstance(ev, e.BidsRevealed) for ev in log) == 5


def test_the_published_corpus_is_what_this_implementation_records() -> None:
    """Regenerate it with `renature corpus --game goofspiel > docs/corpus-goofspiel.jsonl` when
    a rule changes on purpose."""
    lines = CORPUS.read_bytes().splitlines()
    assert lines == [msgspec.json.encode(game) for game in GAME.corpus()]
    for line in lines:
        name, problems = GAME.check_corpus_game(line)
        assert problems == [], name


def test_a_corpus_check_finds_what_differs() -> None:
    game = msgspec.json.decode(CORPUS.read_bytes().splitlines()[0], type=corpus.CorpusGame)
    assert corpus.check(replace(game, scores=[0, 0]))
    counts = [game.legal_actions[0] + 1, *game.legal_actions[1:]]
    assert corpus.check(replace(game, legal_actions=counts))[0].startswith("command 1:")
    assert corpus.check(
        replace(game, commands=game.commands[:-1], legal_actions=game.legal_actions[:-1])
    ) == ["a recorded command is refused: the game does not end with the last recorded bid"]


def test_a_resigned_game_audits_and_counts_the_prizes_left_unplayed() -> None:
    log, state = play("resign", ["greedy", "random"])
    cut = next(i for i, ev in enumerate(log) if isinstance(ev, e.BidsRevealed) and ev.turn == 4)
    prefix = log[: cut + 2]  # through the fifth prize turned up
    partway = replay(prefix)
    assert partway is not None
    resigned, state = execute(partway, c.Resign(seat=1))
    ended, state = execute(state, c.FinishGame(seed="resign"))
    report = audit([*prefix, *resigned, *ended])
    assert report.ok, report.findings
    assert report.winners == [0]
    assert GAME.table(state).statuses == ["playing", "resigned"]


def test_the_cli_prints_and_checks_the_corpus(tmp_path: Path) -> None:
    """``renature corpus --game goofspiel`` prints the published corpus and checks a file."""
    from typer.testing import CliRunner

    from gameserver.cli import app

    runner = CliRunner()
    printed = runner.invoke(app, ["corpus", "--game", "goofspiel"])
    assert printed.exit_code == 0, printed.output
    assert printed.stdout.encode() == CORPUS.read_bytes()
    changed = tmp_path / "changed.jsonl"
    lines = CORPUS.read_text().splitlines()
    changed.write_text("\n".join([lines[0].replace('"scores":[', '"scores":[1'), *lines[1:]]))
    checked = runner.invoke(app, ["corpus", "--game", "goofspiel", "--check", str(changed)])
    assert checked.exit_code == 1
    assert "scores" in checked.stdout
