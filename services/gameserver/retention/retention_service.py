"""``renature serve retention``: the retention service (`eventstore.retention_policy`).

One small process per deployment (several are harmless: they share the ``retention`` consumer
group and every step is idempotent) that applies the retention policy every ``interval_s``:
lobbies that never start expire, finished games are compacted and optionally archived, streams
are trimmed below what every consumer group acknowledged, idle consumers are removed. It
connects as its own Redis user (``RENATURE_REDIS_USER_RETENTION``, see docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

from eventstore import KeyLayout
from eventstore.retention_policy import RetentionPolicy, Stage, serve
from gameplatform import game_names, get_game
from gameserver.runtime.logging import configure_logging, get_logger
from gameserver.runtime.settings import Settings

log = get_logger("renature.retention")


def stage_of(event: bytes) -> Stage | None:
    """What an event does to its game's life, as the hosted games say (`Game.starts`,
    `Game.closes`; a stream's first event creates its game): the retention policy's
    `StageOf`, so that the store decides nothing by a game's event names."""
    for name in game_names():
        game = get_game(name)
        try:
            decoded: Any = game.decode_event(event)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue  # another game's event
        if game.closes(decoded):
            return "closed"
        if game.starts(decoded):
            return "started"
        if getattr(decoded, "version", None) == 1:
            return "created"
        return None
    return None


def run(settings: Settings) -> None:
    """Blocking entry point (SIGINT/SIGTERM stop it: asyncio.run cancels the loop)."""
    configure_logging(settings.log_level, service="retention")
    policy = RetentionPolicy.from_env()
    log.info("retention_started", policy=str(policy))
    layout = KeyLayout(settings.prefix, settings.partitions)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings.redis_url, layout, policy, settings.consumer, stage_of))
