"""The dispute tools of Renaissance: audit, score explanation, pictures and the corpus."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from renaissance import corpus
from renaissance import events as e
from renaissance.audit import audit
from renaissance.explain import explain
from renaissance.game import play, replay
from renaissance.picture import board_svg, board_text
from renaissance.state import GameState

CORPUS = Path(__file__).resolve().parents[3] / "docs" / "corpus-renaissance.jsonl"


@cache
def game() -> tuple[list[e.Event], GameState]:
    return play("tools", ["greedy", "random"])


def test_a_game_played_by_the_rules_passes_the_audit() -> None:
    log, state = game()
    report = audit(log)
    assert report.ok
    assert report.finished
    assert report.scores == list(state.scores)
    assert "scores recounted from the pieces" in report.checks


def test_the_audit_catches_a_changed_event_even_with_the_chain_recomputed() -> None:
    log, _ = game()
    number = next(i for i, ev in enumerate(log) if isinstance(ev, e.PieceAcquired))
    taken = log[number]
    assert isinstance(taken, e.PieceAcquired)
    other = "silver" if taken.colour == "gold" else "gold"
    forged = list(log)
    forged[number] = replace(taken, colour=other)
    report = audit(forged)
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.check == "hash chain"
    # the forger reseals the whole chain: re-deciding the command still catches it
    prev = ""
    for i, event in enumerate(forged):
        forged[i] = e.seal(event, prev)
        prev = forged[i].hash
    report = audit(forged)
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.check == "rules"
    assert report.first_bad.version == taken.version


def test_the_audit_catches_a_dropped_event() -> None:
    log, _ = game()
    report = audit(log[:10] + log[11:])
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.version == 11


def test_the_explanation_adds_up_to_the_scores_line_by_line() -> None:
    log, state = game()
    report = explain(log)
    assert report.scores == list(state.scores)
    for seat in (0, 1):
        lines = [line for line in report.lines if line.seat == seat]
        assert sum(line.points for line in lines) == report.scores[seat]
        if lines:
            assert lines[-1].total == report.scores[seat]
    assert any(line.rule == "polyominoes" for line in report.lines)
    assert report.winners == list(state.winners)


def test_the_pictures_show_every_piece_and_marker() -> None:
    log, _ = game()
    number = next(i for i, ev in enumerate(log) if isinstance(ev, e.PieceAcquired))
    state = replay(log[:number])
    assert state is not None
    svg = board_svg(state, "test")
    assert svg.startswith("<svg")
    assert svg.endswith("</svg>")
    assert svg.count('class="square"') == 49
    assert svg.count('class="marker"') == sum(m >= 0 for m in state.markers)
    text = board_text(state)
    assert len(text.splitlines()) == 9
    rows = [line[3:].ljust(21) for line in text.splitlines()[1:8]]
    cells = [row[i : i + 3] for row in rows for i in range(0, 21, 3)]
    assert [cell[0] for cell in cells].count("#") == 1  # the centre
    assert sum(cell[1] in "sg" for cell in cells) == sum(m >= 0 for m in state.markers)


def test_the_pictures_of_the_lobby_show_the_empty_board_and_who_has_sat_down() -> None:
    log, _ = game()
    joined = next(i for i, ev in enumerate(log) if isinstance(ev, e.PlayerJoined))
    lobby = replay(log[: joined + 1])
    assert lobby is not None
    assert lobby.phase == "lobby"
    text = board_text(lobby)
    rows = text.splitlines()[1:8]
    assert "".join(rows).count("#") == 1  # the centre; every other square free
    assert "".join(row[3:] for row in rows).replace(" ", "").count(".") == 48
    assert text.splitlines()[-1] == "waiting for the first set (seated: greedy)"
    svg = board_svg(lobby, "lobby")
    assert svg.count('class="square"') == 49
    assert 'class="marker"' not in svg
    assert "waiting for the first set (seated: greedy)" in svg


@cache
def published() -> list[corpus.CorpusGame]:
    decoder = msgspec.json.Decoder(corpus.CorpusGame)
    return [decoder.decode(line) for line in CORPUS.read_bytes().splitlines()]


def test_the_published_corpus_is_what_this_implementation_records() -> None:
    """Regenerate it with `renature corpus --game renaissance > docs/corpus-renaissance.jsonl`."""
    assert published() == [corpus.record(*g) for g in corpus.GAMES]


@pytest.mark.parametrize("number", range(len(corpus.GAMES)))
def test_every_corpus_game_replays_as_recorded(number: int) -> None:
    assert corpus.check(published()[number]) == []


def test_the_corpus_covers_every_kind_of_command() -> None:
    kinds = {type(cmd).__name__ for g in published() for cmd in g.commands}
    assert {
        "PlacePiece",
        "LiftPiece",
        "PlaceMarker",
        "PushMarker",
        "PlaceMonomino",
        "MoveMarker",
        "ProposeEnd",
        "AcceptProposal",
        "ShowHand",
        "ChoosePiece",
    } <= kinds
    variants = {corpus.variant_name(g[3]) for g in corpus.GAMES}
    assert variants >= {"standard", "phase1-rectangle-ring", "phase2-take", "phase2-give"}
    game0 = published()[0]
    counts = list(game0.legal_actions)
    counts[3] += 1
    (problem,) = corpus.check(replace(game0, legal_actions=counts))
    assert problem.startswith("command 4:")
