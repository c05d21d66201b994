"""Where the audit tools read a game's events: the event store in Redis, the archive of games
moved out of Redis (``RENATURE_ARCHIVE_DIR``, see `eventstore.archive`), or a JSON-lines
file (an export, or ``renature simulate --events``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, NamedTuple

import redis.asyncio as aioredis

from eventstore import KeyLayout, RedisEventStore
from eventstore.archive import ArchiveDir
from gameplatform import get_game
from gameserver.runtime.settings import Settings
from gameserver.runtime.state_cache import game_of_stream


class NoSuchGame(LookupError):
    pass


class Loaded(NamedTuple):
    """A game's events and the name of its game (read from the stream, or given for a file)."""

    game: str
    events: list[Any]


def read_file(path: Path, game: str = "renature") -> list[Any]:
    """Events of a ``game`` game from a JSON-lines file, one event per line (blank lines are
    ignored)."""
    decode = get_game(game).decode_event
    with path.open("rb") as lines:
        return [decode(line) for line in lines if line.strip()]


async def read_store(game_id: str, settings: Settings) -> Loaded:
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
    game = game_of_stream(stored)  # the stream names its game on its first event
    return Loaded(game.name, [game.decode_event(s.data) for s in stored])


def load(
    game_id: str | None, events_file: Path | None, redis_url: str | None, game: str = "renature"
) -> Loaded:
    """The game's events (a file's are read as ``game``'s); `NoSuchGame` when there are none
    to read."""
    if events_file is not None:
        events = read_file(events_file, game)
        if not events:
            raise NoSuchGame(f"The file {events_file} holds no events.")
        return Loaded(game, events)
    if game_id is None:
        raise NoSuchGame("Name a game id (read from Redis) or an --events file.")
    return asyncio.run(read_store(game_id, Settings.from_env(redis_url=redis_url)))
