"""Redis bytes per game: what a finished and an active game cost while they stay in Redis.

A private ``redis-server`` (never the system Redis) and the whole stack in this process: the
rules service, the board and score projectors and the gateway (over ASGI). Bots play whole
2-to-4-player games through the HTTP API as players would, each seat also sending a few refused
commands (out of turn); one more game is left half played. Then every key of each game is
weighed with ``MEMORY USAGE <key> SAMPLES 0`` (the exact size, with Redis' own overhead), and
each game gets its share of the partition feeds and of the command streams (their bytes split
by their entries). Measured twice: as the services leave Redis with no retention ("before"),
and after one pass of the retention service (`gameserver.retention`, "after"), which
trims what every consumer group has acknowledged, drops a finished game's command outcomes
after its grace period (here 0 s) and keeps refused outcomes minutes.

Run: ``uv run --frozen python -m bench --only storage`` (or ``python -m bench.storage``).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, cast

import httpx
from redis.asyncio import Redis

from devkit.redis_server import RedisServer
from eventstore import KeyLayout
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.projectors import Projector, board_and_score, create_projector
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.logging import configure_logging
from gameserver.runtime.settings import Settings
from renature.bots import make_bot
from renature.game import bot_seed
from renature.state import GameState

TARGET_FINISHED_BYTES = 340_000 // 3
"""The storage target: at most a third of the 340 KB a chaos run measured per finished game."""

FINISHED_GAMES = 6
REFUSED_PER_SEAT = 5
ACTIVE_COMMANDS = 40


@dataclass
class Figures:
    finished: float
    active: float
    keys_finished: float
    detail: dict[str, float]


async def key_bytes(redis: Redis, key: bytes) -> int:
    return int(await redis.memory_usage(key, samples=0) or 0)


async def weigh(redis: Redis, finished: list[str], active: list[str]) -> Figures:
    """Bytes per finished and per active game: its own keys plus its share of shared streams."""
    games = finished + active
    own: dict[str, int] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    keys: dict[str, int] = defaultdict(int)
    shared_streams: list[bytes] = []
    async for key in redis.scan_iter(count=1000):
        text = key.decode()
        owner = next((g for g in games if text.endswith(":" + g) or f":{g}:" in text), None)
        if owner is None:
            if await redis.type(key) == b"stream":
                shared_streams.append(key)
            continue
        size = await key_bytes(redis, key)
        own[owner] += size
        keys[owner] += 1
        if owner in finished:
            kind = text.split(":")[2] if text.count(":") >= 2 else text
            kinds[kind] += size
    # Shared streams (partition feeds, the command streams): split by entries per game.
    share: dict[str, float] = defaultdict(float)
    for stream in shared_streams:
        size = await key_bytes(redis, stream)
        entries = cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(stream))
        if not entries:
            continue
        per_entry = size / len(entries)
        for _, fields in entries:
            game = fields.get(b"game")
            name = game.decode() if game else _game_of_command(fields)
            if name in games:
                share[name] += per_entry
                if name in finished:
                    kinds["shared streams"] += int(per_entry)
    total = {g: own[g] + share[g] for g in games}
    detail = {kind: size / len(finished) for kind, size in sorted(kinds.items())}
    return Figures(
        finished=sum(total[g] for g in finished) / len(finished),
        active=sum(total[g] for g in active) / max(1, len(active)),
        keys_finished=sum(keys[g] for g in finished) / len(finished),
        detail=detail,
    )


def _game_of_command(fields: dict[bytes, bytes]) -> str:
    """The game id of a command-stream entry (FastStream's binary envelope holds our JSON)."""
    raw = next(iter(fields.values()), b"")
    marker = b'"game_id":"'
    start = raw.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    return raw[start : raw.find(b'"', start)].decode(errors="replace")


async def renature_state(client: GatewayClient, game_id: str, token: str) -> GameState:
    """The seat's state of a Renature game (the client's game here)."""
    state = await client.state(game_id, token)
    assert isinstance(state, GameState), "this bench plays Renature"
    return state


async def play(client: GatewayClient, players: int, seed: str, limit: int | None) -> str:
    """One game through the gateway with greedy/random bots; ``limit`` commands, or to the end.
    Every seat also sends a few refused commands (out of turn), as players do."""
    bots = ["greedy" if seat % 2 else "random" for seat in range(players)]
    game_id = await client.create_game(players, seed=seed)
    tokens = [await client.join(game_id, seat, name) for seat, name in enumerate(bots)]
    await client.start(game_id, tokens[0])
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    refused = 0
    for number in range(limit or 100_000):
        state = await renature_state(client, game_id, tokens[0])
        if state.phase in ("final_scoring", "finished"):
            break
        seat = state.current
        state = await renature_state(client, game_id, tokens[seat])
        if refused < REFUSED_PER_SEAT * players:
            idle = (seat + 1) % players
            with contextlib.suppress(Exception):
                from renature import commands as c

                await client.send(game_id, tokens[idle], c.EndTurn(idle), f"no-{number}")
            refused += 1
        await client.send(game_id, tokens[seat], agents[seat].choose(state, seat), f"b-{number}")
    if limit is None:
        for _ in range(200):
            if (await renature_state(client, game_id, tokens[0])).phase == "finished":
                break
            await asyncio.sleep(0.05)
    return game_id


MODELS = board_and_score().names
"""The read models the projector writes (board and score)."""


async def settle(redis: Redis, layout: KeyLayout, games: list[str]) -> None:
    """Wait until both read models reflect every game's last version."""
    from eventstore import RedisEventStore

    store = RedisEventStore(redis, prefix=layout.prefix, partitions=layout.partitions)
    for _ in range(400):
        pending = 0
        for game_id in games:
            version = await store.version(game_id)
            for name in MODELS:
                stored = await redis.hget(layout.model_key(name, game_id), "version")
                pending += stored is None or int(stored) < version
        if not pending:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the projectors did not catch up")


async def measure(redis_url: str) -> tuple[Figures, Figures]:
    settings = Settings.of(redis_url=redis_url, consumer="storage-bench", allow_chosen_seeds=True)
    layout = KeyLayout(settings.store.prefix, settings.store.partitions)
    redis = Redis.from_url(redis_url)
    stop = asyncio.Event()
    projector: Projector[Any] = create_projector(settings, redis, board_and_score())  # as `all`
    projecting = asyncio.create_task(projector.run(stop, block_ms=100))
    # no rate limits, no token lapse: the bench measures storage, not the gateway's limits
    app = create_app(
        settings.with_(enabled=False, token_ttl_after_end_s=None), command_timeout=10.0
    )
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            RulesService(settings),
            app.router.lifespan_context(app),
            GatewayClient("http://gateway", transport=transport, timeout=10.0) as client,
        ):
            finished = [
                await play(client, 2 + n % 3, f"storage-{n}-{uuid.uuid4().hex[:6]}", None)
                for n in range(FINISHED_GAMES)
            ]
            active = [await play(client, 3, "storage-active", ACTIVE_COMMANDS)]
            await settle(redis, layout, finished + active)
            before = await weigh(redis, finished, active)
            after = await retained(redis, settings, finished, active)
    finally:
        stop.set()
        await asyncio.gather(projecting, return_exceptions=True)
        await redis.aclose()
    return before, after


async def retained(
    redis: Redis, settings: Settings, finished: list[str], active: list[str]
) -> Figures:
    """The figures after one pass of the retention service (finished games' grace: 0 s)."""
    policy = Settings.from_env().retention.with_(finished_grace_s=0, consumer_idle_s=0)
    layout = KeyLayout(settings.store.prefix, settings.store.partitions)
    janitor = Retention(redis, layout, policy, stage_of=stage_of)
    await janitor.run_once()
    return await weigh(redis, finished, active)


def kb(value: float) -> str:
    return f"{value / 1000:,.1f} KB"


def report(before: Figures, after: Figures) -> None:
    print(
        f"finished game: {kb(before.finished)} before retention ({before.keys_finished:.0f} keys), "
        f"{kb(after.finished)} after ({after.keys_finished:.0f} keys); "
        f"target {kb(TARGET_FINISHED_BYTES)} "
        f"({'met' if after.finished <= TARGET_FINISHED_BYTES else 'NOT met'})"
    )
    active = f"active game ({ACTIVE_COMMANDS} moves in): {kb(before.active)} before, "
    print(active + f"{kb(after.active)} after")
    print("  per finished game, by key kind: before " + _kinds(before) + "; after " + _kinds(after))


def _kinds(figures: Figures) -> str:
    return ", ".join(f"{kind} {kb(size)}" for kind, size in figures.detail.items())


def run() -> None:
    print(f"== Redis bytes per game ({FINISHED_GAMES} finished games, 1 active, private Redis) ==")
    configure_logging("WARNING", "storage-bench")  # the services run in this process: quiet
    try:
        server = RedisServer().start()
    except (FileNotFoundError, RuntimeError) as error:
        print(f"skipped: no private redis-server ({error})")
        return
    try:
        before, after = asyncio.run(measure(server.url))
        report(before, after)
    finally:
        server.cleanup()


if __name__ == "__main__":
    run()
