"""Where the audit tools read a game's events: the event store in Redis, the archive of games
moved out of Redis (``RENATURE_ARCHIVE_DIR``, see `renature_store.archive`), or a JSON-lines
file (an export, or ``renature simulate --events``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import redis.asyncio as aioredis

from renature import events as e
from renature_services.settings import Settings
from renature_store import KeyLayout, RedisEventStore
from renature_store.archive import ArchiveDir


class NoSuchGame(LookupError):
    pass


def read_file(path: Path) -> list[e.Event]:
    """Events from a JSON-lines file, one event per line (blank lines are ignored)."""
    with path.open("rb") as lines:
        return [e.decode(line) for line in lines if line.strip()]


async def read_store(game_id: str, settings: Settings) -> list[e.Event]:
    client = aioredis.from_url(settings.redis_url)
    try:
        store = RedisEventStore(client, prefix=settings.prefix, partitions=settings.partitions)
        stored = await store.read(game_id)
    finally:
        await client.aclose()
    if not stored and (directory := os.environ.get("RENATURE_ARCHIVE_DIR")):
        layout = KeyLayout(settings.prefix, settings.partitions)
        stored = ArchiveDir(directory, layout).read(game_id) or []
    if not stored:
        raise NoSuchGame(f"There is no game {game_id!r} in the store at {settings.redis_url}.")
    return [e.decode(s.data) for s in stored]


def load(game_id: str | None, events_file: Path | None, redis_url: str | None) -> list[e.Event]:
    """The game's events; `NoSuchGame` when there are none to read."""
    if events_file is not None:
        events = read_file(events_file)
        if not events:
            raise NoSuchGame(f"The file {events_file} holds no events.")
        return events
    if game_id is None:
        raise NoSuchGame("Name a game id (read from Redis) or an --events file.")
    return asyncio.run(read_store(game_id, Settings.from_env(redis_url=redis_url)))
