"""Finished games, compacted: packed in Redis, or archived out of Redis to compressed files.

One format for both: gzip-compressed JSON lines, one stored event a line,

    {"version": 7, "event": {...the event's JSON...}, "meta": {...} | null, "hash": "..." | null}

i.e. exactly what the game stream held (`StoredEvent`), so a game read back from either place is
the game that was played: the audit checks it like any other. An archived game whose server
signs its records ends with one more line, its latest seal as the rules service stored it,

    {"seal": {...}}

so that the archive carries the signature and key id out of Redis with the events (the store
keeps the seal's bytes as they are; ``gameserver.runtime.signing`` reads them).

- **Packed** (`packed_key`, ``<prefix>:{pNN}:packed:<game_id>``, in the game's hash slot): the
  retention service replaces a finished game's stream by this one string once the game's grace
  period is over. JSON lines of events compress about fivefold, which is what keeps a finished
  game that stays in Redis within a third of its former size. The event store reads a packed
  game transparently (`RedisEventStore.read` falls back to it when the stream is gone).
- **Archived** (`ArchiveDir`, ``<dir>/pNN/<game_id>.jsonl.gz``): later, and only where an
  archive directory is configured (``RENATURE_ARCHIVE_DIR``), the retention service writes the
  file (to a temporary name, fsynced, then renamed: a file either is whole or is not there) and
  only then removes the game from Redis. ``renature audit | explain | replay`` read games from
  there when Redis no longer has them; ``zcat`` shows them.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from eventstore.keys import KeyLayout, check_game_id
from eventstore.types import StoredEvent

SUFFIX = ".jsonl.gz"


class _Line(msgspec.Struct, frozen=True):
    version: int
    event: msgspec.Raw
    meta: msgspec.Raw = msgspec.Raw(b"null")  # the batch meta's JSON, or null
    hash: str | None = None


class _SealLine(msgspec.Struct, frozen=True):
    seal: msgspec.Raw


SEAL_LINE = b'{"seal":'
"""How the seal line of an archive begins (the same line as an export's last)."""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(_Line)
_seal_decoder = msgspec.json.Decoder(_SealLine)


def packed_key(layout: KeyLayout, game_id: str) -> str:
    """The string holding a finished game's packed events (in the game's hash slot)."""
    return f"{layout.base(layout.partition_of(game_id))}:packed:{game_id}"


def pack(events: Iterable[StoredEvent], seal: bytes | None = None) -> bytes:
    """Stored events as gzip-compressed JSON lines (deterministic: no file name, no time),
    then the game's ``seal`` (its JSON as stored) where it has one."""
    lines = b"".join(
        _encoder.encode(
            _Line(
                event.version,
                msgspec.Raw(event.data),
                msgspec.Raw(b"null" if event.meta is None else event.meta),
                event.hash,
            )
        )
        + b"\n"
        for event in events
    )
    if seal is not None:
        lines += _encoder.encode(_SealLine(msgspec.Raw(seal))) + b"\n"
    return gzip.compress(lines, compresslevel=9, mtime=0)


def unpack(blob: bytes) -> list[StoredEvent]:
    """The stored events of a packed or archived game, in version order (its seal aside)."""
    out = []
    for line in gzip.decompress(blob).splitlines():
        if not line.strip() or line.startswith(SEAL_LINE):
            continue
        parsed = _decoder.decode(line)
        out.append(
            StoredEvent(
                version=parsed.version,
                data=bytes(parsed.event),
                meta=None if bytes(parsed.meta) == b"null" else bytes(parsed.meta),
                hash=parsed.hash,
            )
        )
    return out


def unpack_seal(blob: bytes) -> bytes | None:
    """The seal's JSON that a packed or archived game carries (None when it has none)."""
    for line in reversed(gzip.decompress(blob).splitlines()):
        if line.startswith(SEAL_LINE):
            return bytes(_seal_decoder.decode(line).seal)
    return None


def with_seal(blob: bytes, seal: bytes | None) -> bytes:
    """A packed game carrying ``seal`` (its events unchanged; ``blob`` as it is without one)."""
    return blob if seal is None else pack(unpack(blob), seal)


def after(
    events: Sequence[StoredEvent], after_version: int, limit: int | None
) -> list[StoredEvent]:
    """The events after ``after_version``, at most ``limit`` of them (as `read` answers)."""
    chosen = [event for event in events if event.version > after_version]
    return chosen if limit is None else chosen[:limit]


class ArchiveDir:
    """Finished games archived out of Redis: ``<root>/pNN/<game_id>.jsonl.gz``."""

    def __init__(self, root: str | os.PathLike[str], layout: KeyLayout | None = None) -> None:
        self.root = Path(root)
        self.layout = layout or KeyLayout()

    def path(self, game_id: str) -> Path:
        partition = self.layout.partition_of(check_game_id(game_id))
        return self.root / f"p{partition:02d}" / f"{game_id}{SUFFIX}"

    def write(self, game_id: str, blob: bytes) -> Path:
        """Write a packed game (`pack`) durably: temporary file, fsync, rename, fsync the
        directory. Writing the same game again replaces the file with the same bytes."""
        target = self.path(game_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{game_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return target

    def read(self, game_id: str) -> list[StoredEvent] | None:
        """The archived game's stored events, or None when it is not archived here."""
        try:
            blob = self.path(game_id).read_bytes()
        except FileNotFoundError:
            return None
        return unpack(blob)

    def read_seal(self, game_id: str) -> bytes | None:
        """The seal's JSON an archived game carries (None: not archived here, or no seal)."""
        try:
            blob = self.path(game_id).read_bytes()
        except FileNotFoundError:
            return None
        return unpack_seal(blob)

    def games(self) -> list[str]:
        """The ids of every archived game."""
        return sorted(p.name.removesuffix(SUFFIX) for p in self.root.glob(f"p*/*{SUFFIX}"))
