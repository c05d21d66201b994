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
from gameplatform import game_names
from gameserver.runtime.settings import Settings
from gameserver.runtime.state_cache import game_of_stream, game_reading


class NoSuchGame(LookupError):
    pass


class Loaded(NamedTuple):
    """A game's events and the name of its game (read from the stream, or given for a file)."""

    game: str
    events: list[Any]


def read_file(path: Path, game: str | None = None) -> Loaded:
    """A JSON-lines file of events (blank lines ignored) and its game, read from its first
    event (a creation names its game in its provenance); `NoSuchGame` for a file of no hosted
    game, or of another game than ``game`` where one is named."""
    with path.open("rb") as file:
        lines = [line for line in file if line.strip()]
    if not lines:
        raise NoSuchGame(f"The file {path} holds no events.")
    found = game_reading(lines[0])
    if found is None:
        raise NoSuchGame(
            f"The file {path} is no game hosted here: its first event is no creation of "
            f"{' or '.join(game_names())}."
        )
    if game is not None and game != found.name:
        raise NoSuchGame(f"The file {path} holds a {found.name} game, not a {game} game.")
    return Loaded(found.name, [found.decode_event(line) for line in lines])


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
    game_id: str | None, events_file: Path | None, redis_url: str | None, game: str | None = None
) -> Loaded:
    """The game's events and its game (a file's or a stream's own: its first event names it;
    ``game``, where given, must be that game); `NoSuchGame` when there are none to read."""
    if events_file is not None:
        return read_file(events_file, game)
    if game_id is None:
        raise NoSuchGame("Name a game id (read from Redis) or an --events file.")
    return asyncio.run(read_store(game_id, Settings.from_env(redis_url=redis_url)))
