"""The dispute tools on the command line: ``renature audit | explain | replay | export``.

Games are read from a JSON-lines file (``--events``) or from the event store in Redis, where
they were played through the real rules service. The audit's exit status is the verdict: 0 when
every check holds, 1 with the first bad event named when not, 2 when there is nothing to audit,
3 for a file that is not an event log (hostile files included: refused quickly, clearly).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from msgspec.structs import replace
from typer.testing import CliRunner, Result

from devkit.redis_server import free_port
from eventstore import RedisEventStore
from gameserver.cli import app
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature import events as e
from renature.audit import AuditReport
from renature.components import COLOURS
from renature.explain import Explanation
from renature.game import Outcome, play, replay
from support.chain import rechained
from support.gateway import gateway_settings

SVG = "{http://www.w3.org/2000/svg}"
RENATURE = str(Path(sys.executable).parent / "renature")


def cli(*args: str | Path | int) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def said(result: Result) -> str:
    """Everything printed, with line wrapping undone (rich wraps long lines)."""
    return " ".join(result.output.split())


def write_events(path: Path, events: Sequence[e.Event]) -> Path:
    path.write_bytes(b"".join(e.encode(ev) + b"\n" for ev in events))
    return path


def svg_counts(path: Path) -> tuple[list[int], int]:
    """The dominoes (ids) and the number of plants drawn in an SVG file."""
    root = ET.fromstring(path.read_text())
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "domino"]
    dominoes = [int(g.get("data-domino", "-1")) for g in groups]
    plants = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "plant"]
    return sorted(dominoes), len(plants)


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[e.Event]]:
    log, _ = play(3, "cli-audit", ["greedy", "random", "greedy"])
    return write_events(tmp_path_factory.mktemp("audit") / "game.jsonl", log), log


# -- from a file -----------------------------------------------------------------------------------


def test_audit_of_a_fair_game_file_exits_0(game_file: tuple[Path, list[e.Event]]) -> None:
    path, log = game_file
    result = cli("audit", "--events", path)
    assert result.exit_code == 0, result.output
    text = said(result)
    assert f"Audit of game {log[0].game_id}: holds ({len(log)} events" in text
    assert "checked: deal reproduced from seed" in text
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    assert f"final scores {ended.scores}" in text
    as_json = cli("audit", "--events", path, "--json")
    assert as_json.exit_code == 0
    report = msgspec.json.decode(as_json.stdout, type=AuditReport)
    assert report.ok
    assert report.scores == ended.scores


def test_audit_of_a_tampered_file_exits_1_and_names_the_first_bad_event(
    game_file: tuple[Path, list[e.Event]], tmp_path: Path
) -> None:
    _, log = game_file
    at = next(i for i, ev in enumerate(log) if isinstance(ev, e.PlantPlaced) and ev.points > 1)
    plant = log[at]
    assert isinstance(plant, e.PlantPlaced)
    tampered = [*log[:at], replace(plant, points=plant.points + 2), *log[at + 1 :]]

    result = cli("audit", "--events", write_events(tmp_path / "edited.jsonl", tampered))
    assert result.exit_code == 1
    text = said(result)
    assert "FAILS" in text
    assert f"First bad event: number {plant.version} (hash chain)" in text

    forged = write_events(tmp_path / "forged.jsonl", rechained(tampered))
    result = cli("audit", "--events", forged)
    assert result.exit_code == 1
    text = said(result)
    assert f"First bad event: number {plant.version} (rules)" in text
    assert f"points: stored {plant.points + 2}, rules give {plant.points}" in text

    as_json = cli("audit", "--events", forged, "--json")
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert data["ok"] is False
    assert data["first_bad"]["version"] == plant.version
    assert data["first_bad"]["check"] == "rules"
    assert data["scores"] == []


def test_a_forged_seed_is_reported_word_for_word(
    game_file: tuple[Path, list[e.Event]], tmp_path: Path
) -> None:
    """The report quotes what the forger wrote, even text that looks like terminal markup."""
    _, log = game_file
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    seed = "[/red][bold]my seed"
    forged = write_events(
        tmp_path / "seed.jsonl", rechained([*log[:-1], replace(ended, seed=seed)])
    )
    result = cli("audit", "--events", forged)
    assert result.exit_code == 1, result.output
    text = said(result)
    assert f"First bad event: number {ended.version} (seed)" in text
    assert f"the revealed seed '{seed}' does not match the commitment" in text


def test_audit_of_nothing_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "NoSuchEvent"}\n')
    assert cli("audit", "--events", broken).exit_code == 3  # not an event log
    assert cli("audit", "--events", tmp_path / "missing.jsonl").exit_code == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    nothing = cli("audit", "--events", empty)
    assert nothing.exit_code == 2
    assert "holds no events" in said(nothing)
    assert cli("audit").exit_code == 2  # neither a game id nor a file


def nested(depth: int) -> bytes:
    return b'{"type":"TurnEnded","x":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (nested(100_000), "line 2 nests too deep to be an event"),
        (b'{"type":"TurnEnded","game_id":"\xff\xfe"}', "line 2 is not UTF-8 text"),
        (b'{"type":"TurnEnded","game_id":"' + b"x" * 10_000_000 + b'"}', "line 2 is longer than"),
        (b'{"type":"' + b"T" * 500_000 + b'"}', "line 2 is not an event: Invalid value"),
        (b"[" * 100_000, "line 2 is not an event"),
    ],
    ids=["nested-100000-deep", "invalid-utf8", "10-MB-field", "huge-tag", "unclosed"],
)
def test_a_hostile_file_is_refused_quickly_with_exit_3(
    game_file: tuple[Path, list[e.Event]], tmp_path: Path, line: bytes, says: str
) -> None:
    """Not an event log: its own exit status (not 1, the failed audit), the line named, a
    short message, in well under a second of work (a 10 MB field took over 60 s)."""
    first = game_file[0].read_bytes().splitlines()[0]
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(first + b"\n" + line + b"\n")
    for command in ("audit", "explain", "replay"):
        began = time.monotonic()
        result = cli(command, "--events", hostile)
        assert time.monotonic() - began < 5
        assert result.exit_code == 3, result.output
        assert says in said(result)
        assert len(result.output) < 1000


def test_a_long_value_that_is_an_event_is_audited_in_bounded_time(
    game_file: tuple[Path, list[e.Event]], tmp_path: Path
) -> None:
    """A 900 kB game id fits the line limit: the audit runs, fails, and prints a clipped id
    without highlighting it (rich's highlighter took minutes over such a line)."""
    _, log = game_file
    long_id = replace(log[0], game_id="x" * 900_000)
    began = time.monotonic()
    result = cli("audit", "--events", write_events(tmp_path / "long.jsonl", [long_id, *log[1:]]))
    assert time.monotonic() - began < 10
    assert result.exit_code == 1
    assert "more)" in said(result)
    assert len(result.output) < 5000


def test_an_unreachable_store_exits_2_with_a_message() -> None:
    result = cli("audit", "some-game", "--redis-url", f"redis://127.0.0.1:{free_port()}/0")
    assert result.exit_code == 2
    assert "Cannot read the event store" in said(result)


def test_explain_adds_up_to_every_final_score(game_file: tuple[Path, list[e.Event]]) -> None:
    path, log = game_file
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    result = cli("explain", "--events", path, "--json")
    assert result.exit_code == 0, result.output
    report = msgspec.json.decode(result.stdout, type=Explanation)
    for seat, score in enumerate(ended.scores):
        lines = [line for line in report.lines if line.seat == seat]
        assert sum(line.points for line in lines) == score
        assert lines[-1].total == score
    for seat, colour in enumerate(report.colours):
        mine = cli("explain", "--events", path, "--seat", colour, "--json")
        assert mine.exit_code == 0
        lines = msgspec.json.decode(mine.stdout, type=Explanation).lines
        assert {line.seat for line in lines} == {seat}
        assert sum(line.points for line in lines) == lines[-1].total == ended.scores[seat]
    table = said(cli("explain", "--events", path))
    winner = ended.ranking[0]
    assert f"1. {report.colours[winner]}: {ended.scores[winner]} points (winner)" in table
    nobody = cli("explain", "--events", path, "--seat", "purple")
    assert nobody.exit_code == 2
    assert "no seat plays 'purple'" in said(nobody)


@pytest.mark.parametrize("number", [5, 60, 151])
def test_replay_to_n_shows_the_state_after_event_n(
    game_file: tuple[Path, list[e.Event]], tmp_path: Path, number: int
) -> None:
    path, log = game_file
    expected = replay(log[:number])
    assert expected is not None
    picture = tmp_path / f"after-{number}.svg"
    result = cli("replay", "--events", path, "--to", number, "--svg", picture)
    assert result.exit_code == 0, result.output
    text = said(result)
    scores = ", ".join(f"{COLOURS[s.colour]} {s.score}" for s in expected.seats)
    assert f"After event {number} (turn {expected.turn}, {expected.phase}): {scores}" in text
    dominoes, plants = svg_counts(picture)
    assert dominoes == sorted(d for d, _, _ in expected.dominoes)
    assert plants == sum(1 for code in expected.plants if code >= 0)


# -- from the event store, games played through the rules service ----------------------------------


async def play_through_the_rules_service(
    redis_url: str, players: int, seed: str, bots: list[str]
) -> Outcome:
    app_ = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app_)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-audit")),
        app_.router.lifespan_context(app_),
        GatewayClient("http://gateway", transport=transport) as client,
    ):
        outcome = await play_game(client, players, seed, bots)
        assert isinstance(outcome, Outcome)
        return outcome


@pytest.fixture
async def stored_game(redis: aioredis.Redis, redis_url: str) -> tuple[Outcome, list[bytes]]:
    """A 2-player game in the store (the services are stopped again) and its stored events."""
    result = await play_through_the_rules_service(redis_url, 2, "cli-store", ["greedy", "random"])
    stored = await RedisEventStore(redis).read(result.game_id)
    return result, [s.data for s in stored]


async def run_cli(*args: str | Path | int) -> Result:
    """The CLI in a worker thread: it runs its own event loop to read Redis."""
    return await asyncio.to_thread(cli, *args)


@pytest.mark.redis
async def test_audit_of_a_game_in_redis_exits_0(
    stored_game: tuple[Outcome, list[bytes]], redis_url: str
) -> None:
    result, stored = stored_game
    command = [RENATURE, "audit", result.game_id, "--redis-url", redis_url]
    done = await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "holds" in done.stdout

    as_json = await run_cli("audit", result.game_id, "--redis-url", redis_url, "--json")
    assert as_json.exit_code == 0, as_json.output
    report = msgspec.json.decode(as_json.stdout, type=AuditReport)
    assert report.ok
    assert report.finished
    assert report.events == len(stored) == result.events
    assert report.scores == result.scores
    assert report.winners == result.winners
    # the game through the service is the game in process: same deal, same moves, same score
    log, state = play(2, "cli-store", ["greedy", "random"])
    assert report.scores == [s.score for s in state.seats]
    assert report.batches == sum(1 for ev in log if ev.cause is not None)

    explained = await run_cli(
        "explain", result.game_id, "--redis-url", redis_url, "--seat", result.colours[0], "--json"
    )
    assert explained.exit_code == 0, explained.output
    lines = msgspec.json.decode(explained.stdout, type=Explanation).lines
    assert sum(line.points for line in lines) == lines[-1].total == result.scores[0]

    missing = await run_cli("audit", "0" * 32, "--redis-url", redis_url)
    assert missing.exit_code == 2
    assert "There is no game" in said(missing)


@pytest.mark.redis
@pytest.mark.parametrize("command", ["audit", "explain", "replay", "export"])
async def test_no_command_prints_the_password_of_the_redis_url(
    redis_url: str, command: str
) -> None:
    """An unknown game names the store it looked in, with the password masked (the test
    server takes any password for its default user)."""
    secret = "s3cret-pa55word"
    with_password = redis_url.replace("redis://", f"redis://default:{secret}@", 1)
    missing = await run_cli(command, "0" * 32, "--redis-url", with_password)
    assert missing.exit_code == 2, missing.output
    assert "There is no game" in said(missing)
    assert "redis://default:***@" in said(missing)
    assert secret not in missing.output


@pytest.mark.redis
async def test_export_then_audit_events_round_trip(
    stored_game: tuple[Outcome, list[bytes]], redis_url: str, tmp_path: Path
) -> None:
    result, stored = stored_game
    exported = tmp_path / "export.jsonl"
    done = await run_cli("export", result.game_id, "--redis-url", redis_url, "--out", exported)
    assert done.exit_code == 0, done.output
    lines = exported.read_bytes().splitlines()
    assert [e.decode(line) for line in lines] == [e.decode(data) for data in stored]
    assert lines == stored  # byte for byte: the hashes are over these bytes
    to_stdout = await run_cli("export", result.game_id, "--redis-url", redis_url)
    assert to_stdout.stdout_bytes == exported.read_bytes()

    audited = await run_cli("audit", "--events", exported, "--json")
    assert audited.exit_code == 0, audited.output
    report = msgspec.json.decode(audited.stdout, type=AuditReport)
    assert report.ok
    assert report.scores == result.scores

    number = len(stored) // 2
    picture = tmp_path / "half.svg"
    shown = await run_cli(
        "replay", result.game_id, "--redis-url", redis_url, "--to", str(number), "--svg", picture
    )
    assert shown.exit_code == 0, shown.output
    expected = replay([e.decode(data) for data in stored[:number]])
    assert expected is not None
    assert f"After event {number} (turn {expected.turn}" in said(shown)
    dominoes, plants = svg_counts(picture)
    assert dominoes == sorted(d for d, _, _ in expected.dominoes)
    assert plants == sum(1 for code in expected.plants if code >= 0)
