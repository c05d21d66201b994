"""Values as redis-py returns them: ``bytes`` from a bytes client, ``str`` from a decoding one.

The store and every service read hashes, ids and versions from Redis; `text` is the one way to
turn such a value into a ``str`` whichever client handed it over, `stream_reply` the one way to
read an ``XREAD``/``XREADGROUP`` reply whichever protocol (RESP2 or RESP3) carried it, and
`group_read` the one way to write an ``XREADGROUP`` of new entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

RawEntry = tuple[bytes | str | None, Mapping[bytes | str, bytes | str] | None]
"""A stream entry as Redis returns it: its id and fields (None for an entry deleted since)."""


def text(value: object) -> str:
    """``value`` as text: bytes decoded as UTF-8, anything else as ``str`` gives it."""
    return value.decode() if isinstance(value, bytes) else str(value)


def group_read(
    group: str, consumer: str, keys: Iterable[Any], count: int, block_ms: int | None
) -> tuple[Any, ...]:
    """``XREADGROUP`` of the entries of ``keys`` new to ``group`` for ``consumer``: at most
    ``count`` a stream, waiting ``block_ms`` for some (``None``: not waiting)."""
    keys = list(keys)
    waiting = () if block_ms is None else ("BLOCK", block_ms)
    return (
        "XREADGROUP",
        "GROUP",
        group,
        consumer,
        "COUNT",
        count,
        *waiting,
        "STREAMS",
        *keys,
        *[">"] * len(keys),
    )


def stream_reply(reply: Any) -> Iterator[tuple[bytes | str, list[RawEntry]]]:
    """Normalise an XREADGROUP reply: RESP2 gives ``[[key, entries]]``, RESP3 a dict."""
    if not reply:
        return
    pairs = reply.items() if isinstance(reply, dict) else reply
    for key, entries in pairs:
        yield key, list(_flatten_entries(entries))


def _flatten_entries(entries: Any) -> Iterator[RawEntry]:
    """Entries are ``(id, fields)`` pairs, nested one list deeper under RESP3."""
    for item in entries:
        if len(item) == 2 and isinstance(item[0], bytes | str):
            yield item[0], item[1]
        else:
            yield from _flatten_entries(item)
