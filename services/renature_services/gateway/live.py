"""Live updates: push every new event of a game to a WebSocket, as that viewer may see it.

The pump reads the game's stream directly with ``XREAD BLOCK`` from the last version it sent, so
events arrive in version order, none is skipped, and a reconnecting client resumes with
``?after=<last version seen>``. Secrets are blanked with ``renature.view.visible_event`` before
anything leaves the process: another seat's drawn or discarded domino, the deal, and token ids
of areas scored by someone else are never sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from redis.asyncio import Redis

from renature import events as e
from renature.view import visible_event

BLOCK_MS = 5_000
PAGE = 100

Send = Callable[[str], Awaitable[None]]


async def pump_events(
    redis: Redis, stream_key: str, viewer: int | None, after: int, send: Send
) -> None:
    """Send each event after version ``after``, redacted for ``viewer``; returns after the
    game ended (``GameEnded`` was sent), runs until cancelled otherwise."""
    last = after
    while True:
        reply = await redis.xread({stream_key: f"0-{last}"}, count=PAGE, block=BLOCK_MS)
        for entry_id, fields in _entries(reply):
            event = e.decode(fields[b"event"])
            await send(msgspec.json.encode(visible_event(event, viewer)).decode())
            last = _version(entry_id)
            if isinstance(event, e.GameEnded):
                return


def _entries(reply: Any) -> list[tuple[bytes | str, dict[bytes, bytes]]]:
    """The entries of a one-stream XREAD reply (RESP2 list or RESP3 dict)."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else reply
    out: list[tuple[bytes | str, dict[bytes, bytes]]] = []
    for _key, entries in pairs:
        for item in entries:
            if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[1], dict):
                out.append((item[0], item[1]))
            else:  # RESP3 nests each stream's entries one level deeper
                out.extend((entry_id, fields) for entry_id, fields in item)
    return out


def _version(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.partition("-")[2])
