"""Signed game records: a file that proves, offline, that it came from the server.

The rules service seals each game with its Ed25519 key as the game runs and when it ends; the
export carries the seal; ``renature audit --events FILE --key KEY`` checks it against the
gateway's published keys. A forger who re-seals event 5 with the project's own sealing function
keeps the hash chain whole, and the signature still names event 5; a truncated file, a file
without its seal and another server's key all fail too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from msgspec.structs import replace
from typer.testing import CliRunner, Result

from eventstore import KeyLayout, RedisEventStore
from gameserver.cli import app
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import signing
from gameserver.runtime.settings import Settings
from renature import events as e
from renature.audit import AuditReport
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


def cli(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def said(result: Result) -> str:
    return " ".join(result.output.split())


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    """The rules service's key, mounted as a file (as the Kubernetes Secret is)."""
    path = tmp_path / "signing.pem"
    path.write_bytes(signing.private_pem(signing.new_key()))
    return path


@pytest.fixture
async def signed_export(
    key_file: Path, redis: aioredis.Redis, redis_url: str, tmp_path: Path
) -> tuple[Path, Path, str]:
    """A game played through the services, exported with its seal; and the gateway's keys."""
    gateway = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=gateway)
    async with (
        RulesService(
            Settings.of(
                redis_url=redis_url, consumer="rules-signing", signing_key_file=str(key_file)
            )
        ),
        gateway.router.lifespan_context(gateway),
        GatewayClient("http://gateway", transport=transport) as client,
    ):
        outcome = await play_game(client, 2, "signed", ["greedy", "random"])
        async with httpx.AsyncClient(base_url="http://gateway", transport=transport) as http:
            keys = await http.get("/.well-known/renature-keys.json")
    assert keys.status_code == 200
    keys_file = tmp_path / "renature-keys.json"
    keys_file.write_bytes(keys.content)
    exported = tmp_path / "game.jsonl"
    done = await asyncio.to_thread(
        cli, "export", outcome.game_id, "--redis-url", redis_url, "--out", exported
    )
    assert done.exit_code == 0, done.output
    stored = await RedisEventStore(redis).read(outcome.game_id)
    lines = exported.read_bytes().splitlines()
    assert lines[:-1] == [s.data for s in stored]  # the events as stored, then the seal
    seal = msgspec.json.decode(lines[-1], type=signing.SealLine).seal
    assert seal.events == len(stored)  # sealed at the end, every event
    assert seal == await signing.stored_seal(redis, KeyLayout(), outcome.game_id)
    return exported, keys_file, outcome.game_id


def refused(path: Path, key: Path) -> str:
    """What ``renature audit --events path --key key`` says, having exited 1 (not signed)."""
    result = cli("audit", "--events", path, "--key", key)
    assert result.exit_code == 1, result.output
    assert "Not what the server signed" in said(result)
    return said(result)


def events_and_seal(path: Path) -> tuple[list[e.Event], bytes]:
    lines = path.read_bytes().splitlines()
    return [e.decode(line) for line in lines[:-1]], lines[-1]


def write(path: Path, events: list[e.Event], seal: bytes) -> Path:
    path.write_bytes(b"".join(e.encode(ev) + b"\n" for ev in events) + seal + b"\n")
    return path


async def test_an_export_proves_itself_with_the_published_keys(
    signed_export: tuple[Path, Path, str], key_file: Path, tmp_path: Path
) -> None:
    exported, keys_file, _ = signed_export
    result = cli("audit", "--events", exported, "--key", keys_file)
    assert result.exit_code == 0, result.output
    assert "Signed by the server" in said(result)
    assert "holds" in said(result)
    public = tmp_path / "public.pem"  # one key as a PEM file works as well
    public.write_bytes(signing.public_pem(signing.load_private_key(key_file).public_key()))
    as_json = cli("audit", "--events", exported, "--key", public, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert msgspec.json.decode(as_json.stdout, type=AuditReport).ok


async def test_a_resealed_event_is_named_though_its_chain_holds(
    signed_export: tuple[Path, Path, str], tmp_path: Path
) -> None:
    exported, keys_file, _ = signed_export
    events, seal = events_and_seal(exported)
    path = write(tmp_path / "resealed.jsonl", resealed(events, 5), seal)
    assert "event 5 differs from what the server signed" in refused(path, keys_file)
    unsigned = cli("audit", "--events", path, "--json")  # the chain holds: re-sealed
    first_bad = msgspec.json.decode(unsigned.stdout, type=AuditReport).first_bad
    assert first_bad is not None
    assert first_bad.check != "hash chain"


async def test_a_truncated_file_fails_naming_the_first_missing_event(
    signed_export: tuple[Path, Path, str], tmp_path: Path
) -> None:
    exported, keys_file, _ = signed_export
    events, seal = events_and_seal(exported)
    cut = len(events) - 3
    path = write(tmp_path / "truncated.jsonl", events[:cut], seal)
    assert f"event {cut + 1} is missing" in refused(path, keys_file)
    unsealed = tmp_path / "unsealed.jsonl"
    unsealed.write_bytes(b"".join(e.encode(ev) + b"\n" for ev in events))
    assert "carries no seal" in refused(unsealed, keys_file)


async def test_another_key_or_a_forged_seal_fails(
    signed_export: tuple[Path, Path, str], tmp_path: Path
) -> None:
    exported, keys_file, _ = signed_export
    other = tmp_path / "other.pem"
    other.write_bytes(signing.public_pem(signing.new_key().public_key()))
    assert "not among the keys given" in refused(exported, other)
    events, seal_line = events_and_seal(exported)
    seal = msgspec.json.decode(seal_line, type=signing.SealLine).seal
    digests = [*seal.digests[:-1], signing.digest(b"forged")]  # a seal edited to match a forgery
    forged = msgspec.json.encode(signing.SealLine(replace(seal, digests=digests)))
    path = write(tmp_path / "forged.jsonl", events, forged)
    assert "signature does not verify" in refused(path, keys_file)


def resealed(events: list[e.Event], number: int) -> list[e.Event]:
    """``events`` with event ``number`` changed and the chain recomputed with the project's own
    `seal`: the hash chain holds, only the signature can tell."""
    forged: list[e.Event] = []
    prev = ""
    for event in events:
        changed = replace(event, seat=(event.seat or 0) + 1) if event.version == number else event
        forged.append(e.seal(changed, prev))
        prev = forged[-1].hash
    return forged


async def test_the_dispute_desk_says_whether_this_server_signed_the_file(
    signed_export: tuple[Path, Path, str], redis_url: str, tmp_path: Path
) -> None:
    """``POST /disputes`` checks the seal against the keys this server publishes: signed (the
    key, up to which event), not signed (none, or another server's), or differs at event N."""
    exported, keys_file, _ = signed_export
    events, seal_line = events_and_seal(exported)
    seal = msgspec.json.decode(seal_line, type=signing.SealLine).seal
    (published,) = msgspec.json.decode(keys_file.read_bytes(), type=signing.KeySet).keys
    assert published.key_id == seal.key_id
    lines = exported.read_bytes().splitlines()[:-1]
    stranger = signing.sign(signing.new_key(), seal.game_id, lines)  # another server's seal
    files = {
        "honest": exported.read_bytes(),
        "resealed": write(tmp_path / "r.jsonl", resealed(events, 5), seal_line).read_bytes(),
        "truncated": write(tmp_path / "t.jsonl", events[:-3], seal_line).read_bytes(),
        "unsigned": b"".join(e.encode(ev) + b"\n" for ev in events),
        "stranger": write(
            tmp_path / "s.jsonl", events, msgspec.json.encode(signing.SealLine(stranger))
        ).read_bytes(),
    }
    gateway = create_app(gateway_settings(redis_url))
    transport = httpx.ASGITransport(app=gateway)
    async with (
        gateway.router.lifespan_context(gateway),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        answers = {}
        for name, raw in files.items():
            inspected = await http.post("/disputes", content=raw)
            assert inspected.status_code == 200, inspected.text
            answers[name] = inspected.json()
        picture = await http.post("/disputes", params={"at": 3}, content=files["honest"])
    assert answers["honest"]["audit"]["ok"] is True
    assert answers["honest"]["seal"] == {
        "status": "signed",
        "message": f"signed by the server (key {seal.key_id}): events 1 to {len(events)}",
        "key_id": seal.key_id,
        "signed_events": len(events),
        "first_difference": None,
    }
    differs = answers["resealed"]["seal"]
    assert (differs["status"], differs["first_difference"]) == ("differs", 5)
    assert differs["message"] == "event 5 differs from what the server signed"
    assert answers["resealed"]["audit"]["first_bad"]["check"] != "hash chain"  # re-sealed
    cut = answers["truncated"]["seal"]
    assert (cut["status"], cut["first_difference"]) == ("differs", len(events) - 2)
    assert "is missing" in cut["message"]
    assert answers["unsigned"]["seal"]["status"] == "not_signed"
    assert "carries no seal" in answers["unsigned"]["seal"]["message"]
    assert answers["stranger"]["seal"]["status"] == "not_signed"
    assert "not among the keys given" in answers["stranger"]["seal"]["message"]
    assert picture.status_code == 200
    assert picture.json()["seal"] is None  # ?at=N answers the picture alone
