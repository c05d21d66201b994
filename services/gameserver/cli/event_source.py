"""Where the audit tools read a game's events: the event store in Redis, the archive of games
moved out of Redis (``RENATURE_ARCHIVE_DIR``, see `eventstore.archive`), or a JSON-lines
file (an export, or ``renature simulate --events``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec

from gameplatform import game_names, get_game
from gameplatform.chain import Event
from gameserver.runtime.redis_auth import without_credentials
from gameserver.runtime.settings import Settings
from gameserver.runtime.signing import SEAL_LINE, Seal, SealLine

T = TypeVar("T")

MAX_LINE_BYTES = 1024 * 1024
"""The longest line a file may have: an event takes a few hundred bytes, a creation a few
kilobytes; a longer line is no event, and is refused before it is decoded or printed."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file read (a whole game is well under a megabyte)."""
_seal_line = msgspec.json.Decoder(SealLine)


class NoSuchGame(LookupError):
    pass


class UnreadableFile(ValueError):
    """A file that is not an event log: a line too long, nested too deep, not UTF-8, not
    JSON or not an event. The message names the line and never quotes more than a little of
    it."""


class Loaded(NamedTuple):
    """A game's events and the name of its game (read from the stream, or given for a file)."""

    game: str
    events: list[Event]


def clipped(text: str, limit: int = 160) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out (a hostile file's
    value in a message must not make the message, or its printing, huge)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more)"


def read_file(path: Path, game: str | None = None) -> Loaded:
    """A JSON-lines file of events, one event per line (blank lines and the seal line of a
    signed export are skipped), and its game, read from its first event (a creation names its
    game in its provenance). `NoSuchGame` for a file without events, of no hosted game, or of
    another game than ``game`` where one is named; `UnreadableFile` for a file that is not an
    event log, in time linear in its size: lines are read at most `MAX_LINE_BYTES` at a time
    and decoded by msgspec, whose nesting limit ends a line nested thousands deep at once."""
    from gameserver.runtime.state_cache import game_reading

    lines = [(n, line) for n, line in _lines(path) if not line.startswith(SEAL_LINE)]
    if not lines:
        raise NoSuchGame(f"The file {path} holds no events.")
    number, first = lines[0]
    found = game_reading(first)
    if found is None:
        where = f"{path}: line {number}"
        tag = _decoded(_tagged.decode, first, where).type
        if tag not in _event_tags():
            raise UnreadableFile(f"{where} is not an event: {clipped(repr(tag))} is no event type.")
        raise NoSuchGame(
            f"The file {path} is no game hosted here: its first event is no creation of "
            f"{' or '.join(game_names())}."
        )
    if game is not None and game != found.name:
        raise NoSuchGame(f"The file {path} holds a {found.name} game, not a {game} game.")
    decode = found.decode_event
    return Loaded(found.name, [_decoded(decode, line, f"{path}: line {n}") for n, line in lines])


class _Tagged(msgspec.Struct):
    """Any event's tag (the rest of the line is left unread)."""

    type: Any = None  # any JSON: a line of a file that may not be an event log at all


_tagged = msgspec.json.Decoder(_Tagged)


def _event_tags() -> set[str | int]:
    """The tags of every hosted game's events."""
    tags: set[str | int] = set()
    for name in game_names():
        info = msgspec.inspect.type_info(get_game(name).event_type)
        kinds = info.types if isinstance(info, msgspec.inspect.UnionType) else (info,)
        structs = [kind for kind in kinds if isinstance(kind, msgspec.inspect.StructType)]
        tags.update(kind.tag for kind in structs if kind.tag is not None)
    return tags


def read_signed(path: Path) -> tuple[list[bytes], Seal | None]:
    """The event lines of a file as written (without their line ends) and its seal, if any."""
    events: list[bytes] = []
    seal = None
    for number, line in _lines(path):
        if line.startswith(SEAL_LINE):
            seal = _decoded(_seal_line.decode, line, f"{path}: line {number}").seal
        else:
            events.append(line.rstrip(b"\r\n"))
    return events, seal


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The numbered non-blank lines of a file, within `MAX_LINE_BYTES` and `MAX_FILE_BYTES`."""
    total = 0
    with path.open("rb") as lines:
        number = 0
        while line := lines.readline(MAX_LINE_BYTES + 1):
            number += 1
            total += len(line)
            if len(line) > MAX_LINE_BYTES:
                raise UnreadableFile(
                    f"{path}: line {number} is longer than {MAX_LINE_BYTES} bytes: no event is "
                    "that long, so this is not an event log."
                )
            if total > MAX_FILE_BYTES:
                raise UnreadableFile(f"{path} is larger than {MAX_FILE_BYTES} bytes: no game is.")
            if line.strip():
                yield number, line


def _decoded(decode: Callable[[bytes], T], line: bytes, where: str) -> T:
    try:
        return decode(line)
    except RecursionError:
        raise UnreadableFile(f"{where} nests too deep to be an event.") from None
    except UnicodeDecodeError:
        raise UnreadableFile(f"{where} is not UTF-8 text.") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise UnreadableFile(f"{where} is not an event: {clipped(str(error))}") from None


async def _stored(client: Any, game_id: str, settings: Settings) -> list[Any]:
    """A game's stored events: in Redis (a stream, or packed), else in the archive."""
    from eventstore import KeyLayout, RedisEventStore
    from eventstore.archive import ArchiveDir

    store = RedisEventStore(
        client, prefix=settings.store.prefix, partitions=settings.store.partitions
    )
    stored: list[Any] = await store.read(game_id)
    if not stored and (directory := settings.retention.archive_dir):
        layout = KeyLayout(settings.store.prefix, settings.store.partitions)
        stored = ArchiveDir(directory, layout).read(game_id) or []
    if not stored:
        where = without_credentials(settings.store.redis_url)  # never print a password
        raise NoSuchGame(f"There is no game {clipped(repr(game_id))} in the store at {where}.")
    return stored


async def read_store(game_id: str, settings: Settings) -> Loaded:
    # Imported here: redis takes a third of a second to import, and a file needs none of it.
    from eventstore.redis_client import redis_client
    from gameserver.runtime.state_cache import game_of_stream

    client = redis_client(settings.store.redis_url)  # a RedisCluster for a cluster URL
    try:
        stored = await _stored(client, game_id, settings)
    finally:
        await client.aclose()
    game = game_of_stream(stored)  # the stream names its game on its first event
    return Loaded(game.name, [game.decode_event(s.data) for s in stored])


async def read_export(game_id: str, settings: Settings) -> bytes:
    """What ``renature export`` writes: a stored game's events as the server stored them (the
    very bytes its seal signed), one a line, then its latest seal where it has one, read from
    Redis or, for an archived game, from its archive. `NoSuchGame` as `read_store`."""
    from eventstore.redis_client import redis_client
    from gameserver.runtime.state_cache import game_of_stream

    client = redis_client(settings.store.redis_url)  # a RedisCluster for a cluster URL
    try:
        stored = await _stored(client, game_id, settings)
        seal = await _seal(client, game_id, settings)
    finally:
        await client.aclose()
    game = game_of_stream(stored)
    for event in stored:  # a stored event that is no event of its game is no export
        game.decode_event(event.data)
    data = b"".join(event.data + b"\n" for event in stored)
    return data if seal is None else data + msgspec.json.encode(SealLine(seal)) + b"\n"


async def _seal(client: Any, game_id: str, settings: Settings) -> Seal | None:
    """A game's latest seal: in Redis while the game is there, else in its archive."""
    from eventstore import KeyLayout
    from eventstore.archive import ArchiveDir
    from gameserver.runtime.signing import stored_seal

    layout = KeyLayout(settings.store.prefix, settings.store.partitions)
    seal = await stored_seal(client, layout, game_id)
    if seal is None and (directory := settings.retention.archive_dir):
        raw = ArchiveDir(directory, layout).read_seal(game_id)
        seal = None if raw is None else msgspec.json.decode(raw, type=Seal)
    return seal


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
