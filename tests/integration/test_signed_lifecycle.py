"""Signed game records over a game's whole life: sealed as it runs, archived, keys rotated.

Through real Redis, the real rules service, the gateway, the retention service's code and the
CLI: a running game is sealed every `signing.SEAL_EVERY` events (its later events are told
apart as unsigned); a finished game that retention archives out of Redis keeps its seal (the
archive carries it, Redis keeps nothing of the game), and its export still proves itself with
the published keys, a re-sealed or truncated copy failing by the event; after a rotation both
keys are published and a record signed by the retired key still verifies, until that key is
taken off the list.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from msgspec.structs import replace
from typer.testing import CliRunner, Result

from eventstore import KeyLayout, RedisEventStore
from eventstore import archive as packing
from gameserver.cli import app
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import signing
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy
from renature import events as e
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


def run_cli(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


async def cli(*args: str | Path) -> Result:
    """The CLI, run as a user runs it: outside this test's event loop."""
    return await asyncio.to_thread(run_cli, *args)


def said(result: Result) -> str:
    return " ".join(result.output.split())


def new_key_file(path: Path) -> tuple[Path, str]:
    """A signing key as the Secret mounts it, and its id."""
    key = signing.new_key()
    path.write_bytes(signing.private_pem(key))
    return path, signing.key_id(key.public_key())


@asynccontextmanager
async def services(
    redis_url: str, key: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[GatewayClient, httpx.AsyncClient]]:
    """The rules service signing with ``key`` and a gateway: a bot client and plain HTTP."""
    gateway = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=gateway)
    async with (
        RulesService(
            Settings.of(
                redis_url=redis_url, consumer=f"rules-{key.stem}", signing_key_file=str(key)
            )
        ),
        gateway.router.lifespan_context(gateway),
        GatewayClient("http://gateway", transport=transport) as client,
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield client, http


async def play_some(client: GatewayClient, seed: str, events: int) -> str:
    """A 2-player game played by greedy bots until it holds at least ``events`` events (and
    is still running): its id."""
    game = client.game
    game_id = await client.create_game(2, board=game.boards[0], seed=seed)
    tokens = [await client.join(game_id, seat, f"bot{seat}") for seat in range(2)]
    await client.start(game_id, tokens[0])
    bots = [game.make_bot("greedy", game.bot_seed(seed, seat)) for seat in range(2)]
    seat = 0
    for number in range(1000):
        state = await client.state(game_id, tokens[seat])
        assert not game.is_over(state)
        if state.version >= events:
            return game_id
        mover = game.to_move(state)
        assert mover is not None
        if mover != seat:
            seat = mover
            state = await client.state(game_id, tokens[seat])
        command = bots[seat].choose(state, seat)
        await client.send(game_id, tokens[seat], command, command_id=f"bot-{number}")
    raise AssertionError(f"{events} events were not reached")


async def sealed(redis: aioredis.Redis, game_id: str, events: int) -> signing.Seal:
    """The game's seal once it covers at least ``events`` events (the rules service seals a
    batch right after answering it, with every event stored by then)."""
    deadline = time.monotonic() + 10
    while True:
        seal = await signing.stored_seal(redis, KeyLayout(), game_id)
        if seal is not None and seal.events >= events:
            return seal
        assert time.monotonic() < deadline, f"no seal of {events} events: {seal}"
        await asyncio.sleep(0.02)


async def published(http: httpx.AsyncClient, path: Path) -> Path:
    """The gateway's key document, saved as a user would."""
    answer = await http.get("/.well-known/renature-keys.json")
    assert answer.status_code == 200
    path.write_bytes(answer.content)
    return path


async def export(game_id: str, redis_url: str, path: Path) -> Path:
    done = await cli("export", game_id, "--redis-url", redis_url, "--out", path)
    assert done.exit_code == 0, done.output
    return path


async def proved(path: Path, keys: Path) -> str:
    result = await cli("audit", "--events", path, "--key", keys)
    assert result.exit_code == 0, result.output
    return said(result)


async def refused(path: Path, keys: Path) -> str:
    result = await cli("audit", "--events", path, "--key", keys)
    assert result.exit_code == 1, result.output
    assert "Not what the server signed" in said(result)
    return said(result)


async def test_an_archived_game_keeps_its_seal_and_its_export_proves_itself(
    redis: aioredis.Redis, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, kid = new_key_file(tmp_path / "signing.pem")
    async with services(redis_url, key, monkeypatch) as (client, http):
        outcome = await play_game(client, 2, "archived", ["greedy", "random"])
        keys = await published(http, tmp_path / "keys.json")
    stored = await RedisEventStore(redis).read(outcome.game_id)
    seal = await sealed(redis, outcome.game_id, len(stored))
    assert seal.events == len(stored)  # the finished game's head
    packing_only = RetentionPolicy().with_(finished_grace_s=0)  # packed, still in Redis
    retention = Retention(
        redis, KeyLayout(), packing_only, clock=lambda: time.time() + 10, stage_of=stage_of
    )
    assert (await retention.run_once()).games_packed == 1
    assert not await redis.exists(KeyLayout().game_key(outcome.game_id))  # its stream is gone
    packed = await export(outcome.game_id, redis_url, tmp_path / "packed.jsonl")
    assert f"key {kid}" in await proved(packed, keys)

    archive_dir = tmp_path / "archive"
    policy = packing_only.with_(archive_after_s=5, archive_dir=str(archive_dir))
    retention = Retention(
        redis, KeyLayout(), policy, clock=lambda: time.time() + 10, stage_of=stage_of
    )
    report = await retention.run_once()
    assert report.games_archived == 1
    layout = KeyLayout()
    assert (
        await redis.exists(layout.seal_key(outcome.game_id), layout.game_key(outcome.game_id)) == 0
    )
    assert await RedisEventStore(redis).read(outcome.game_id) == []  # out of Redis
    archived = packing.ArchiveDir(archive_dir).path(outcome.game_id)
    last = gzip.decompress(archived.read_bytes()).splitlines()[-1]
    assert msgspec.json.decode(last, type=signing.SealLine).seal == seal  # carried with it
    assert packing.unpack(archived.read_bytes()) == stored

    monkeypatch.setenv("RENATURE_ARCHIVE_DIR", str(archive_dir))
    exported = await export(outcome.game_id, redis_url, tmp_path / "game.jsonl")
    lines = exported.read_bytes().splitlines()
    assert lines[:-1] == [event.data for event in stored]
    assert msgspec.json.decode(lines[-1], type=signing.SealLine).seal == seal
    signed = f"Signed by the server (key {kid}): events 1 to {len(stored)} are the ones it signed."
    assert signed in await proved(exported, keys)
    for reader in (["explain"], ["replay", "--to", "5"]):  # the seal line is skipped
        read = await cli(*reader, "--events", exported)
        assert read.exit_code == 0, read.output

    events = [e.decode(line) for line in lines[:-1]]
    changed = [*events[:6], e.seal(replace(events[6], seat=1), events[5].hash)]
    forged = tmp_path / "forged.jsonl"  # event 7 changed, its hash recomputed, the rest kept
    forged.write_bytes(b"".join(e.encode(ev) + b"\n" for ev in changed) + b"\n".join(lines[7:]))
    assert "event 7 differs from what the server signed" in await refused(forged, keys)
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(b"\n".join([*lines[:10], lines[-1]]) + b"\n")
    assert "event 11 is missing" in await refused(truncated, keys)

    # sealed again with another key (after a leak): the archive file is written again
    other, other_id = new_key_file(tmp_path / "other.pem")
    again = await cli("seal", outcome.game_id, "--signing-key", other, "--redis-url", redis_url)
    assert again.exit_code == 0, again.output
    assert f"in the archive: events 1 to {len(stored)}, key {other_id}" in said(again)
    assert packing.unpack(archived.read_bytes()) == stored
    keys = await published_without_services(redis_url, tmp_path / "keys-now.json")
    resealed = await export(outcome.game_id, redis_url, tmp_path / "resealed.jsonl")
    assert f"key {other_id}" in await proved(resealed, keys)
    unknown = await cli("seal", "no-such-game", "--signing-key", other, "--redis-url", redis_url)
    assert unknown.exit_code == 2


async def test_a_running_game_is_sealed_every_64_events_and_a_rotated_key_still_verifies(
    redis: aioredis.Redis, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, old_id = new_key_file(tmp_path / "old.pem")
    new, new_id = new_key_file(tmp_path / "new.pem")
    async with services(redis_url, old, monkeypatch) as (client, _):
        first = await play_game(client, 2, "before", ["greedy", "greedy"])
    async with services(redis_url, new, monkeypatch) as (client, http):  # the key rotated
        running = await play_some(client, "after", signing.SEAL_EVERY + 6)
        keys = await published(http, tmp_path / "keys.json")
    listed = msgspec.json.decode(keys.read_bytes(), type=signing.KeySet).keys
    assert sorted(entry.key_id for entry in listed) == sorted([old_id, new_id])

    seal = await sealed(redis, running, signing.SEAL_EVERY)  # the running head, at 64
    assert seal.key_id == new_id
    stored = await RedisEventStore(redis).read(running)
    assert seal.events < len(stored)  # sealed when it passed 64, not at every move
    assert seal.digests == [signing.digest(event.data) for event in stored[: seal.events]]
    now = await export(running, redis_url, tmp_path / "running.jsonl")
    later = len(stored) - seal.events
    assert (
        f"Signed by the server (key {new_id}): events 1 to {seal.events} are the ones it "
        f"signed; the {later} events after them are not signed."
    ) in await proved(now, keys)

    before = await export(first.game_id, redis_url, tmp_path / "before.jsonl")
    first_events = before.read_bytes().splitlines()[:-1]
    assert f"Signed by the server (key {old_id})" in await proved(before, keys)  # the retired key
    await redis.hdel(KeyLayout().signing_keys_key(), old_id)  # the old key leaked: taken off
    keys = await published_without_services(redis_url, tmp_path / "keys-now.json")
    assert "not among the keys given" in await refused(before, keys)
    assert f"key {new_id}" in await proved(now, keys)
    again = await cli("seal", first.game_id, "--signing-key", new, "--redis-url", redis_url)
    assert again.exit_code == 0, again.output  # the games that matter, sealed again
    assert f"in Redis: events 1 to {len(first_events)}, key {new_id}" in said(again)
    resealed = await export(first.game_id, redis_url, tmp_path / "resealed.jsonl")
    assert resealed.read_bytes().splitlines()[:-1] == first_events
    assert f"Signed by the server (key {new_id})" in await proved(resealed, keys)
    stranger = signing.public_key_entry(signing.new_key().public_key()).public_key
    await redis.hset(KeyLayout().signing_keys_key(), old_id, stranger)  # another key, old id
    keys = await published_without_services(redis_url, tmp_path / "keys-last.json")
    listed = msgspec.json.decode(keys.read_bytes(), type=signing.KeySet).keys
    assert [entry.key_id for entry in listed] == [new_id]  # an id is its key's digest


async def published_without_services(redis_url: str, path: Path) -> Path:
    """The key document of a gateway started now (no rules service needed to publish)."""
    gateway = create_app(gateway_settings(redis_url))
    transport = httpx.ASGITransport(app=gateway)
    async with (
        gateway.router.lifespan_context(gateway),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        return await published(http, path)
