"""Bounded storage: the retention service against a real Redis.

The attacks: 2,000 lobbies created by anonymous clients never expired; every refused command
left its outcome for 7 days; every event was kept twice (game stream and partition feed, never
trimmed); consumer groups kept every dead consumer; a finished game cost ~340 KB for ever.
Each test fails on the code before the retention service and passes with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest
import redis.asyncio as aioredis
from faststream.redis import RedisBroker

from eventstore import Appended, CommandPartitions, KeyLayout, RedisEventStore
from eventstore import archive as packing
from eventstore.retention_policy import GROUP, Stage
from gameplatform import get_game
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import CommandHandler, RulesService
from gameserver.runtime.bus import CommandEnvelope, Reply
from gameserver.runtime.rules_client import send_command
from gameserver.runtime.seed_vault import RedisSeedVault
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy
from renature import commands as c
from renature import events as e
from renature.audit import audit
from renature.bots import make_bot
from renature.state import GameState

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
CLI = "from gameserver.cli import main; main()"


@pytest.fixture
async def store(redis: aioredis.Redis) -> RedisEventStore:
    return RedisEventStore(redis)


@pytest.fixture
async def handler(redis: aioredis.Redis, store: RedisEventStore) -> CommandHandler:
    """As the rules service builds it: refusals recorded with the policy's short TTL."""
    refusals = RedisEventStore(redis, outcome_ttl_seconds=RetentionPolicy().refused_outcome_ttl_s)
    return CommandHandler(store, RedisSeedVault(redis, store.layout), refusals=refusals)


async def send(
    handler: CommandHandler, game: str, command: msgspec.Struct, cid: str, seat: int | None = None
) -> Reply:
    body = msgspec.json.encode(CommandEnvelope(game, cid, command, seat))
    return msgspec.json.decode((await handler.handle_batch([body]))[0], type=Reply)


async def lobby(handler: CommandHandler, game: str, players: int = 2) -> None:
    assert (await send(handler, game, c.CreateGame(game, players, ""), "create")).status == (
        "accepted"
    )
    for seat in range(players):
        reply = await send(handler, game, c.JoinGame(seat, f"p{seat}"), f"join-{seat}", seat)
        assert reply.status == "accepted"


async def finished_game(handler: CommandHandler, game: str) -> None:
    """A whole 2-player game through the handler, bots on both seats, a refusal per turn."""
    await lobby(handler, game)
    assert (await send(handler, game, c.StartGame(), "start", 0)).status == "accepted"
    bots = [make_bot("greedy", f"{game}|{seat}") for seat in range(2)]
    for number in range(2000):
        state = await handler.load(game)
        assert isinstance(state, GameState)  # a Renature game
        if state.phase == "finished":
            return
        seat = state.current
        if number % 10 == 0:  # out of turn: refused, its outcome recorded
            other = 1 - seat
            assert (await send(handler, game, c.EndTurn(other), f"no-{number}", other)).code
        reply = await send(handler, game, bots[seat].choose(state, seat), f"m-{number}", seat)
        assert reply.status == "accepted", reply
    raise AssertionError("the game did not end")


async def entries(redis: aioredis.Redis, key: str) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """A stream's entries as this client returns them (bytes)."""
    return cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(key))


async def memory(redis: aioredis.Redis, key: str) -> int:
    """The bytes a key takes (0 for a key that is gone)."""
    return await redis.memory_usage(key, samples=0) or 0


async def keys_of(redis: aioredis.Redis, game: str) -> list[str]:
    found = [k.decode() async for k in redis.scan_iter(count=1000)]
    return sorted(k for k in found if k.endswith(":" + game) or f":{game}:" in k)


def janitor(redis: aioredis.Redis, later_s: float = 0.0, **policy: object) -> Retention:
    """A retention service whose clock runs ``later_s`` ahead."""
    return Retention(
        redis,
        KeyLayout(),
        RetentionPolicy().with_(**policy),
        consumer="janitor-test",
        clock=lambda: time.time() + later_s,
        stage_of=stage_of,
    )


async def test_a_lobby_that_never_starts_expires_with_every_key(
    redis: aioredis.Redis, handler: CommandHandler, store: RedisEventStore
) -> None:
    await lobby(handler, "idle-lobby")
    await lobby(handler, "started")
    # The gateway lists games in one sorted set (gateway/lobby.py): both are listed.
    await redis.zadd("rn:lobby", {"8234:idle-lobby": 0, "8233:started": 0})
    assert (await send(handler, "started", c.StartGame(), "start", 0)).status == "accepted"
    assert await keys_of(redis, "idle-lobby")  # stream, seed, outcomes
    lasting = [k for k in await keys_of(redis, "idle-lobby") if ":cmd:" not in k]
    assert [await redis.ttl(k) for k in lasting] == [-1] * len(lasting)  # never expire alone

    soon = await janitor(redis, later_s=60, lobby_ttl_s=3600).run_once()
    assert soon.lobbies_expired == 0  # not yet
    report = await janitor(redis, later_s=3601, lobby_ttl_s=3600).run_once()
    assert report.lobbies_expired == 1
    assert await keys_of(redis, "idle-lobby") == []
    assert await redis.zrange("rn:lobby", 0, -1) == [b"8233:started"]  # no longer listed
    assert "idle-lobby" not in await store.list_games()
    assert await store.version("started") > 0  # a started game stays


async def test_refused_commands_outcomes_live_minutes_not_days(
    redis: aioredis.Redis, redis_url: str
) -> None:
    env = {"REDIS_URL": redis_url, "RENATURE_REFUSED_OUTCOME_TTL_S": "600"}
    async with (
        RulesService(Settings.from_env(env, consumer="rules-ttl")),
        RedisBroker(redis_url) as broker,
    ):
        create = CommandEnvelope("g-ttl", "create", c.CreateGame("g-ttl", 2, ""), None)
        assert (await send_command(broker, create, 5)).status == "accepted"
        refused = CommandEnvelope("g-ttl", "early", c.StartGame(), 0)
        assert (await send_command(broker, refused, 5)).status == "rejected"
    layout = KeyLayout()
    assert 0 < await redis.ttl(layout.command_key("g-ttl", "early")) <= 600
    assert await redis.ttl(layout.command_key("g-ttl", "create")) > 86_400  # accepted: longer


async def test_feeds_are_trimmed_below_what_every_group_acknowledged(
    redis: aioredis.Redis, handler: CommandHandler, store: RedisEventStore
) -> None:
    await lobby(handler, "feed-game")  # 3 events
    partition = store.partition_of("feed-game")
    feed = store.feed_key(partition)
    await store.ensure_group(partition, "slow")
    await store.ensure_group(partition, "fast")
    fast = await store.read_group("fast", "f1", [partition], count=10)
    await store.ack(partition, "fast", [entry.entry_id for entry in fast])
    slow = await store.read_group("slow", "s1", [partition], count=10)
    await store.ack(partition, "slow", [slow[0].entry_id])  # the other two stay pending
    assert await redis.xlen(feed) == 3

    report = await janitor(redis).run_once()
    assert report.entries_trimmed == 1  # only what both groups acknowledged
    assert [entry_id.decode() for entry_id, _ in await entries(redis, feed)] == [
        entry.entry_id for entry in slow[1:]
    ]
    await store.ack(partition, "slow", [entry.entry_id for entry in slow[1:]])
    await janitor(redis).run_once()
    assert await redis.xlen(feed) == 0
    # Nothing lost for a consumer that comes later: the game stream is the source of truth.
    assert len(await store.read("feed-game")) == 3


async def test_every_command_stream_is_trimmed_below_what_the_rules_acknowledged(
    redis: aioredis.Redis, redis_url: str
) -> None:
    games = ["trim-a", "trim-b", "trim-c", "trim-d", "trim-e", "trim-f"]
    commands = CommandPartitions(KeyLayout(), 16)  # the janitor needs no count: it tries all
    streams = {commands.stream_of(g) for g in games}
    assert len(streams) > 2
    settings = Settings.of(redis_url=redis_url, consumer="rules-trim", command_partitions=16)
    async with RulesService(settings), RedisBroker(redis_url) as broker:
        for game in games:
            create = CommandEnvelope(game, "create", c.CreateGame(game, 2, ""), None)
            assert (await send_command(broker, create, 5, streams=commands)).status == "accepted"
    assert sum([await redis.xlen(s) for s in streams]) == len(games)
    report = await janitor(redis).run_once()
    assert report.entries_trimmed >= len(games)
    assert [await redis.xlen(s) for s in streams] == [0] * len(streams)


async def test_idle_consumers_without_pending_entries_are_removed(
    redis: aioredis.Redis, handler: CommandHandler, store: RedisEventStore
) -> None:
    await lobby(handler, "consumers")
    partition = store.partition_of("consumers")
    feed = store.feed_key(partition)
    await store.ensure_group(partition, "proj")
    done = await store.read_group("proj", "dead-and-done", [partition], count=1)
    await store.ack(partition, "proj", [done[0].entry_id])
    await store.read_group("proj", "dead-with-work", [partition], count=1)  # stays pending
    report = await janitor(redis, consumer_idle_s=0).run_once()
    assert report.consumers_removed >= 1
    names = {c["name"].decode() for c in await redis.xinfo_consumers(feed, "proj")}
    assert names == {"dead-with-work"}
    kept = await redis.xinfo_consumers(feed, GROUP)
    assert [c["name"].decode() for c in kept] == ["janitor-test"]


async def test_a_finished_game_is_packed_and_still_read_replayed_and_audited(
    redis: aioredis.Redis, handler: CommandHandler, store: RedisEventStore
) -> None:
    await finished_game(handler, "done")
    before_events = await store.read("done")
    before = sum([await memory(redis, k) for k in await keys_of(redis, "done")])
    outcomes = [k for k in await keys_of(redis, "done") if ":cmd:" in k]
    assert len(outcomes) > 20

    early = await janitor(redis, later_s=60, finished_grace_s=900).run_once()
    assert early.games_packed == 0  # within its grace period: retries still get their answer
    report = await janitor(redis, later_s=901, finished_grace_s=900).run_once()
    assert report.games_packed == 1
    keys = await keys_of(redis, "done")
    assert not any(":game:" in k for k in keys)
    refused = [k for k in keys if ":cmd:" in k]
    assert all(":cmd:done:no-" in k for k in refused)  # accepted outcomes are gone
    assert [0 < await redis.ttl(k) <= 900 for k in refused] == [True] * len(refused)
    assert any(":packed:" in k for k in keys)
    after = sum([await memory(redis, k) for k in keys])
    assert after * 2 < before

    # The store reads the packed game as it was: same events, same versions, same meta.
    assert await store.read("done") == before_events
    assert await store.version("done") == len(before_events)
    assert await store.last("done") == before_events[-1]
    assert await store.exists("done")
    report_ = audit([e.decode(s.data) for s in await store.read("done")])
    assert report_.ok, report_.findings
    assert report_.finished
    # A projector rebuilt after the packing rebuilds the packed game's model too.
    from gameserver.projectors import BoardProjection, Projector

    projector = Projector(store, redis, BoardProjection(), "rebuilder")
    await projector.rebuild()
    model = await redis.hget(KeyLayout().model_key("board", "done"), "version")
    assert int(model or 0) == len(before_events)
    # The rules service still answers for it (every command refused: the game is over).
    reply = await send(
        CommandHandler(store, RedisSeedVault(redis, store.layout)), "done", c.EndTurn(0), "late", 0
    )
    assert reply.code == "game_over"


async def test_a_finished_game_is_archived_out_of_redis_and_the_cli_finds_it(
    redis: aioredis.Redis,
    handler: CommandHandler,
    store: RedisEventStore,
    redis_url: str,
    tmp_path: Path,
) -> None:
    await finished_game(handler, "old")
    played = await store.read("old")
    report = await janitor(
        redis, later_s=10, finished_grace_s=0, archive_after_s=5, archive_dir=str(tmp_path)
    ).run_once()
    assert (report.games_packed, report.games_archived) == (1, 1)
    left = await keys_of(redis, "old")  # only refusals, which expire within minutes alone
    assert all(":cmd:old:no-" in k for k in left)
    assert [0 < await redis.ttl(k) <= 900 for k in left] == [True] * len(left)
    assert "old" not in await store.list_games()
    path = packing.ArchiveDir(tmp_path).path("old")
    assert path.name == "old.jsonl.gz"
    assert packing.unpack(path.read_bytes()) == played

    env = {**os.environ, "REDIS_URL": redis_url, "RENATURE_ARCHIVE_DIR": str(tmp_path)}
    for command in (["audit", "old"], ["explain", "old"], ["replay", "old", "--to", "5"]):
        done = subprocess.run(
            [sys.executable, "-c", CLI, *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=ROOT,
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        if command[0] == "audit":
            assert "holds" in done.stdout


async def send_to(
    handler: CommandHandler, game: str, game_id: str, command: Any, cid: str
) -> Reply:
    """A command of any hosted game's, as the gateway sends it (its seat from the command)."""
    seat = getattr(command, "seat", None)
    body = msgspec.json.encode(CommandEnvelope(game_id, cid, command, seat, game))
    return msgspec.json.decode((await handler.handle_batch([body]))[0], type=Reply)


async def test_another_games_lobbies_and_ends_are_its_own_to_say(
    redis: aioredis.Redis, handler: CommandHandler, store: RedisEventStore
) -> None:
    # Renaissance starts with a set (it has no GameStarted event): a game in play is no lobby
    # and never expires as one; once it has ended it is packed like any finished game.
    game = get_game("renaissance")
    for n, command in enumerate(game.setup_commands("rn-game", "seed", 2, ["a", "b"])):
        assert (await send_to(handler, game.name, "rn-game", command, f"s{n}")).status == (
            "accepted"
        )
    await lobby(handler, "idle-lobby")
    report = await janitor(redis, later_s=3601, lobby_ttl_s=3600).run_once()
    assert report.lobbies_expired == 1  # the idle Renature lobby, not the game in play
    assert await store.version("rn-game") > 0
    bots = [game.make_bot("greedy", game.bot_seed("seed", seat)) for seat in range(2)]
    for number in range(5000):
        state = await handler.load("rn-game")
        assert state is not None
        seat = game.to_move(state)
        if seat is None:
            break
        command = bots[seat].choose(state, seat)
        reply = await send_to(handler, game.name, "rn-game", command, f"m{number}")
        assert reply.status == "accepted", reply
    final = await handler.load("rn-game")
    assert final is not None
    assert game.is_over(final)
    events = await store.read("rn-game")
    report = await janitor(redis, later_s=901, finished_grace_s=900).run_once()
    assert report.games_packed == 1
    assert not any(":game:" in key for key in await keys_of(redis, "rn-game"))
    assert await store.read("rn-game") == events


async def test_the_store_decides_nothing_by_a_games_event_names(
    redis: aioredis.Redis, store: RedisEventStore
) -> None:
    # A game whose events the store has never heard of: the service's StageOf says what they
    # do, and the store indexes, expires and packs by that alone.
    said = {b"Kickoff": "created", b"Whistle": "started", b"FullTime": "closed"}

    def stage_of(event: bytes) -> Stage | None:
        kind = msgspec.json.decode(event)["type"].encode()
        return cast("Stage | None", said.get(kind))

    async def play(game_id: str, kinds: list[str]) -> None:
        for version, kind in enumerate(kinds, start=1):
            event = msgspec.json.encode({"type": kind, "game_id": game_id, "version": version})
            meta = b'{"game": "football"}' if version == 1 else None
            result = await store.append(
                game_id,
                command_id=f"c{version}",
                expected_version=version - 1,
                events=[event],
                outcome=b"{}",
                batch_meta=meta,
            )
            assert isinstance(result, Appended)

    await play("idle", ["Kickoff"])
    await play("playing", ["Kickoff", "Whistle", "Goal"])
    await play("over", ["Kickoff", "Whistle", "Goal", "FullTime"])
    football = Retention(
        redis,
        KeyLayout(),
        RetentionPolicy().with_(lobby_ttl_s=3600, finished_grace_s=900),
        consumer="janitor-football",
        clock=lambda: time.time() + 3601,
        stage_of=stage_of,
    )
    report = await football.run_once()
    assert (report.lobbies_expired, report.games_packed) == (1, 1)
    assert not await store.exists("idle")
    assert await store.version("playing") == 3
    assert await store.version("over") == 4
    assert not any(":game:" in key for key in await keys_of(redis, "over"))


def test_the_retention_service_finishes_its_pass_and_stops_on_sigterm(redis_url: str) -> None:
    """``renature serve retention`` runs under the service runner like the clock and the
    projectors: SIGTERM ends its wait between passes, it closes its connections and exits 0."""
    env = {**os.environ, "REDIS_URL": redis_url, "RENATURE_LOG_LEVEL": "INFO"}
    service = subprocess.Popen(
        [sys.executable, "-c", CLI, "serve", "retention"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    try:
        assert service.stdout is not None
        lines: list[str] = []
        while not any("retention_pass" in line or "retention_started" in line for line in lines):
            line = service.stdout.readline()
            assert line, f"the service ended: {lines}"
            lines.append(line)
        service.send_signal(signal.SIGTERM)
        rest, _ = service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            service.kill()
    assert service.returncode == 0, rest
    assert "retention_stopped" in rest
