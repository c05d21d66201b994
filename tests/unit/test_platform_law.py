"""Platform law, written once: the hash chain, the batch and execute
skeleton, the rule errors, the audit's report, replay, the corpus check and the explanation's
shape are the platform's, and every hosted game runs on them with its events, codes, corpus
lines and outputs what they were."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from gameplatform import chain, errors, get_game
from gameplatform.audit import AuditReport
from gameplatform.explanation import Explanation, count_points, standings
from gameplatform.registry import game_names
from renaissance import corpus as renaissance_corpus
from renaissance import errors as renaissance_errors
from renaissance import events as renaissance_events
from renaissance.game import outcome as renaissance_outcome
from renaissance.game import play as play_renaissance
from renature import corpus as renature_corpus
from renature import errors as renature_errors
from renature import events as renature_events
from renature.game import outcome as renature_outcome
from renature.game import play as play_renature

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "shared" / "gameplatform"


@cache
def played(name: str) -> tuple[list[Any], Any]:
    game = get_game(name)
    bots = ["greedy"] * game.player_counts[0]
    log, state, _ = game.simulate(f"platform-law-{name}", bots)
    return log, state


def rechained(events: list[Any]) -> list[Any]:
    """The events with the chain recomputed from the start, as a careful forger would."""
    out, prev = [], ""
    for event in events:
        out.append(chain.seal(event, prev))
        prev = out[-1].hash
    return out


# --- the hash chain ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", game_names())
def test_every_game_seals_its_events_with_the_one_chain(name: str) -> None:
    log, _ = played(name)
    prev = ""
    for event in log:
        assert isinstance(event, chain.Event)
        assert event.prev_hash == prev
        assert event.hash == chain.chain_hash(event)
        prev = event.hash
    assert renature_events.seal is renaissance_events.seal is chain.seal


def test_an_event_keeps_its_canonical_bytes_field_order() -> None:
    """The platform's fields close every event's JSON in the order they always had (the
    corpus digests pin the whole log; this names the fields)."""
    log, _ = played("renaissance")
    keys = list(msgspec.json.decode(chain.encode(log[1])))
    assert keys[-6:] == ["game_id", "version", "seat", "cause", "prev_hash", "hash"]
    assert chain.canonical_bytes(log[1]) == chain.encode(replace(log[1], hash=""))


# --- rule errors -------------------------------------------------------------------------------

CODES = {
    "RuleError": "rule_broken",
    "InvalidCommand": "invalid_command",
    "GameNotFound": "game_not_found",
    "GameAlreadyExists": "game_exists",
    "NotYourTurn": "not_your_turn",
    "WrongPhase": "wrong_phase",
    "GameOver": "game_over",
}
RENATURE_CODES = {
    "NotInHand": "not_in_hand",
    "IllegalPlacement": "illegal_placement",
    "IllegalPlant": "illegal_plant",
    "NotEnoughClouds": "not_enough_clouds",
    "IllegalCloudAction": "illegal_cloud_action",
    "IllegalMushroom": "illegal_mushroom",
    "SeedMismatch": "seed_mismatch",
}
RENAISSANCE_CODES = {
    "PieceDoesNotFit": "piece_does_not_fit",
    "RelocationRule": "relocation_rule",
    "IllegalMarker": "illegal_marker",
    "IllegalPush": "illegal_push",
    "IllegalProposal": "illegal_proposal",
    "IllegalPreparation": "illegal_preparation",
    "IllegalMove": "illegal_move",
}


def test_the_shared_rule_errors_are_the_platforms_with_their_codes() -> None:
    assert {name: getattr(errors, name).code for name in CODES} == CODES


@pytest.mark.parametrize(
    ("module", "own"),
    [(renature_errors, RENATURE_CODES), (renaissance_errors, RENAISSANCE_CODES)],
)
def test_each_games_errors_subclass_the_platforms_and_keep_their_codes(
    module: Any, own: dict[str, str]
) -> None:
    for name, code in own.items():
        error = getattr(module, name)
        assert issubclass(error, errors.RuleError)
        assert error.code == code
    assert module.RuleError is errors.RuleError
    assert module.NotYourTurn is errors.NotYourTurn


# --- execute -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", game_names())
def test_every_game_refuses_a_second_creation_and_a_move_in_no_game_alike(name: str) -> None:
    game = get_game(name)
    creation, *rest = game.setup_commands("law", "seed", game.player_counts[0], ["a", "b"])
    events, state = game.execute(None, creation)
    with pytest.raises(errors.GameAlreadyExists) as twice:
        game.execute(state, creation)
    assert twice.value.code == "game_exists"
    assert "'law' exists already" in twice.value.message
    with pytest.raises(errors.GameNotFound):
        game.execute(None, rest[0])
    assert game.is_rule_error(twice.value)
    assert game.replay(events) == state


# --- the audit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", game_names())
def test_every_games_audit_is_the_platforms_report(name: str) -> None:
    game = get_game(name)
    log, state = played(name)
    report = game.audit(log)
    assert type(report) is AuditReport
    assert report.ok, report.findings
    assert report.finished
    assert report.winners == list(state.winners)
    assert report.checks[:3] == ["hash chain", "versions", "every command re-decided"]


@pytest.mark.parametrize("name", game_names())
def test_every_games_audit_finds_a_forged_move_even_with_the_chain_recomputed(name: str) -> None:
    game = get_game(name)
    log, _ = played(name)
    number = max(i for i, ev in enumerate(log) if ev.seat is not None and ev.cause is not None)
    forged = rechained([*log[:number], replace(log[number], seat=1 - log[number].seat)])
    report = game.audit(forged + log[number + 1 :])
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.version == number + 1
    assert report.first_bad.check in ("rules", "legality", "hash chain")


def test_an_empty_stream_fails_the_same_way_in_every_game() -> None:
    report, *others = [get_game(name).audit([]) for name in game_names()]
    assert others == [report] * len(others)
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.message == "there are no events"


# --- the corpus --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "record"),
    [
        ("docs/corpus.jsonl", renature_corpus.CorpusGame),
        ("docs/corpus-renaissance.jsonl", renaissance_corpus.CorpusGame),
    ],
)
def test_a_published_corpus_line_reads_and_writes_back_byte_for_byte(
    path: str, record: Any
) -> None:
    """The records are the platform's (`corpus.Record`) with each game's fields first: what
    ``corpus`` writes now is what the published files hold."""
    for line in (ROOT / path).read_bytes().splitlines():
        assert msgspec.json.encode(msgspec.json.decode(line, type=record)) == line


@pytest.mark.parametrize("name", game_names())
def test_the_corpus_check_names_a_changed_result_in_every_game(name: str) -> None:
    game = get_game(name)
    published = "docs/corpus.jsonl" if name == "renature" else f"docs/corpus-{name}.jsonl"
    line = (ROOT / published).read_bytes().splitlines()[0]
    facts = msgspec.json.decode(line)
    facts["winners"] = [seat + 1 for seat in facts["winners"]]
    _, problems = game.check_corpus_game(msgspec.json.encode(facts))
    assert problems == [f"winners {msgspec.json.decode(line)['winners']}, not {facts['winners']}"]


# --- outcomes and explanations ------------------------------------------------------------------


def test_simulate_writes_each_games_outcome_in_its_own_order() -> None:
    log, state = play_renature(2, "order", ["greedy", "greedy"])
    assert list(msgspec.to_builtins(renature_outcome(state, ["greedy"] * 2, len(log)))) == [
        "game_id",
        "board",
        "players",
        "bots",
        "scores",
        "ranking",
        "winners",
        "colours",
        "events",
    ]
    rlog, rstate = play_renaissance("order", ["greedy", "greedy"])
    fields = list(msgspec.to_builtins(renaissance_outcome(rstate, ["greedy"] * 2, len(rlog))))
    assert fields[:3] == ["game_id", "game", "players"]
    assert fields[-3:] == ["sets", "sets_won", "set_scores"]


@pytest.mark.parametrize("name", game_names())
def test_every_explanation_names_its_seats_by_colour_and_player(name: str) -> None:
    game = get_game(name)
    log, _state = played(name)
    explanation = game.explain(log)
    assert isinstance(explanation, Explanation)
    assert explanation.names == ["greedy"] * len(explanation.scores)
    lines = standings(explanation)
    assert len(lines) == len(explanation.ranking)
    for line, seat in zip(lines, explanation.ranking, strict=True):
        assert f"{explanation.colours[seat]} (greedy): " in line
        assert "seat " not in line
    assert sum(seat in explanation.winners for seat in explanation.ranking) == sum(
        "(winner)" in line for line in lines
    )
    assert game.explanation_type is type(explanation)


def test_points_are_counted_in_words() -> None:
    assert [count_points(n) for n in (1, -1, 0, 2, -3)] == [
        "1 point",
        "-1 point",
        "0 points",
        "2 points",
        "-3 points",
    ]
    single = Explanation(
        game_id="g",
        lines=[],
        scores=[1, 0],
        ranking=[0, 1],
        winners=[0],
        colours=["silver", "gold"],
    )
    assert standings(single) == ["1. silver: 1 point (winner)", "2. gold: 0 points"]


# --- the platform names no game ----------------------------------------------------------------


def test_the_platform_imports_no_game_outside_the_registry() -> None:
    games = set(game_names())
    for path in sorted(PLATFORM.glob("*.py")):
        if path.name == "registry.py":
            continue
        tree = ast.parse(path.read_text())
        imported = {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        } | {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert not imported & games, path.name
