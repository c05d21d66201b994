"""``renature serve retention``: the retention service, which keeps Redis bounded.

Without it Redis only grows: lobbies that never start stay forever, every refused command
leaves its outcome for days, every event is kept twice (its game stream and its partition
feed), consumer groups remember every consumer that ever ran, and a finished game keeps
everything it ever had. One small process per deployment (several are harmless: they share the
``retention`` consumer group and every step is idempotent) runs `Retention.run_once` every
``interval_s`` and applies the `RetentionPolicy` through the store's operations
(`eventstore.retention_policy.RetentionStore`):

1. **It follows the partition feeds** with its own consumer group and indexes, per partition,
   lobbies (created, not yet started) and closed games (ended, or called off) by the time of
   the event. Which event creates, starts or closes a game the hosted games say (`stage_of`:
   `Game.starts`, `Game.closes`; a stream's first event creates its game): the store decides
   nothing by a game's event names.
2. **Lobbies that never start expire** ``lobby_ttl_s`` after their creation, with every key.
3. **A finished game is packed** ``finished_grace_s`` after its end, its command outcomes
   deleted.
4. **Finished games are archived out of Redis** ``archive_after_s`` after their end, where an
   archive directory is set (``RENATURE_ARCHIVE_DIR``); ``renature audit | explain | replay``
   read them from there.
5. **Streams are trimmed below what every consumer group has acknowledged**: the partition
   feeds and the command streams.
6. **Idle consumers without pending entries are removed** from every group once idle for
   ``consumer_idle_s``.

It connects as its own Redis user (``RENATURE_REDIS_USER_RETENTION``, see docs/security.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from eventstore import KeyLayout
from eventstore.keys import COMMAND_SENDERS
from eventstore.redis_client import redis_client
from eventstore.redis_values import text as _text
from eventstore.retention_policy import GROUP, RetentionStore, Stage
from gameplatform import game_names, get_game
from gameserver.runtime.logging import get_logger
from gameserver.runtime.service_runner import pause, run_service
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy

log = get_logger("renature.retention")

StageOf = Callable[[bytes], "Stage | None"]
"""What an event (its stored bytes) does to its game's life: creates it (a lobby), starts it,
closes it (nothing is appended after it), or none of these (None)."""


def stage_of(event: bytes) -> Stage | None:
    """What an event does to its game's life, as the hosted games say (`Game.starts`,
    `Game.closes`; a stream's first event creates its game): the `StageOf` of the service,
    so that the store decides nothing by a game's event names."""
    for name in game_names():
        game = get_game(name)
        try:
            decoded = game.decode_event(event)
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


@dataclass
class RetentionReport:
    """What one pass did."""

    events_seen: int = 0
    lobbies_expired: int = 0
    games_packed: int = 0
    outcomes_deleted: int = 0
    games_archived: int = 0
    entries_trimmed: int = 0
    consumers_removed: int = 0


@dataclass
class Retention:
    """Applies a `RetentionPolicy` to the Redis of one deployment (see the module docstring).

    Every step is idempotent and safe beside the running services: several instances may run
    (they share the consumer group), and a pass interrupted half way is finished by the next.
    """

    redis: Redis
    layout: KeyLayout
    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    consumer: str = "retention"
    streams: Sequence[str] | None = None
    """Streams to trim besides the partition feeds (default: every command stream the layout
    can have, ``<prefix>:{pNN}:commands`` and the clock's ``<prefix>:{pNN}:commands:clock``, so
    it needs no command partition count; a stream that does not exist costs one ``XINFO
    GROUPS``)."""
    clock: Callable[[], float] = time.time
    stage_of: StageOf = field(kw_only=True)
    """Which events create, start and close a game (`stage_of`, from the hosted games)."""

    def __post_init__(self) -> None:
        self.store = RetentionStore(self.redis, self.layout, self.consumer)

    async def run_once(self) -> RetentionReport:
        report = RetentionReport()
        report.events_seen = await self.follow_feeds()
        now_ms = int(self.clock() * 1000)
        store, policy = self.store, self.policy
        for partition in range(self.layout.partitions):
            cutoff = now_ms - policy.lobby_ttl_s * 1000
            for game_id in await store.due(store.lobbies_key(partition), cutoff):
                report.lobbies_expired += await store.expire_lobby(game_id)
            cutoff = now_ms - policy.finished_grace_s * 1000
            for game_id, ended in await store.due_scored(store.finished_key(partition), cutoff):
                packed, outcomes = await store.pack_finished(game_id, ended)
                report.games_packed += packed
                report.outcomes_deleted += outcomes
            if policy.archive_dir is not None:
                cutoff = now_ms - policy.archive_after_s * 1000
                for game_id in await store.due(store.packed_index_key(partition), cutoff):
                    report.games_archived += await store.archive_game(game_id, policy.archive_dir)
        for stream in self._streams():
            report.entries_trimmed += await store.trim(stream)
            report.consumers_removed += await store.remove_idle_consumers(
                stream, policy.consumer_idle_s
            )
        return report

    def _streams(self) -> list[str]:
        feeds = self.layout.feed_keys()
        every = [
            self.layout.command_stream(p, sender)
            for p in range(self.layout.partitions)
            for sender in COMMAND_SENDERS
        ]
        extra = self.streams if self.streams is not None else every
        return [*feeds, *extra]

    async def follow_feeds(self, count: int = 1000) -> int:
        """Index lobbies and finished games from the events appended since the last pass."""
        feeds = {self.layout.feed_key(p): p for p in range(self.layout.partitions)}
        for feed in feeds:
            try:
                await self.redis.xgroup_create(feed, GROUP, id="0", mkstream=True)
            except ResponseError as error:
                if "BUSYGROUP" not in str(error):
                    raise
        seen = 0
        while True:
            # One XREADGROUP per feed, pipelined: on a Redis Cluster each feed lives in a hash
            # slot of its own, and one read naming several would be refused (CROSSSLOT).
            reading = self.redis.pipeline(transaction=False)
            for feed in feeds:
                reading.xreadgroup(GROUP, self.consumer, {feed: ">"}, count=count)
            found = cast(  # a bytes client
                "list[list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None]",
                await reading.execute(),
            )
            batches = [batch for per_feed in found for batch in per_feed or []]
            entries = sum(len(entries) for _, entries in batches)
            if not entries:
                return seen
            pipe = self.redis.pipeline(transaction=False)
            for stream, stream_entries in batches:
                partition = feeds[_text(stream)]
                ids = []
                for entry_id, fields in stream_entries:
                    ids.append(entry_id)
                    self._index(pipe, partition, _text(entry_id), fields)
                pipe.xack(stream, GROUP, *ids)
            await pipe.execute()
            seen += entries

    def _index(self, pipe: Any, partition: int, entry_id: str, fields: dict[bytes, bytes]) -> None:
        game = fields.get(b"game")
        event = fields.get(b"event")
        if game is None or event is None:
            return
        stage = self.stage_of(event)
        if stage is not None:
            self.store.index(pipe, partition, game, stage, int(entry_id.split("-")[0]))


async def serve(
    redis_url: str,
    layout: KeyLayout,
    policy: RetentionPolicy,
    consumer: str,
    stage_of: StageOf,
    stop: asyncio.Event,
) -> None:
    """Apply the policy every ``interval_s`` until ``stop`` is set (``renature serve
    retention``): a pass in hand is finished, then the connections are closed."""
    redis = redis_client(redis_url)
    janitor = Retention(redis, layout, policy, consumer=consumer, stage_of=stage_of)
    try:
        while not stop.is_set():
            try:
                report = await janitor.run_once()
                busy = any(vars(report).values())
                (log.info if busy else log.debug)("retention_pass", **vars(report))
            except Exception:  # Redis restarting: the next pass finishes the work
                log.exception("retention_failed")
            await pause(stop, policy.interval_s)
    finally:
        await redis.aclose()
        log.info("retention_stopped")


def run(settings: Settings) -> None:
    """Blocking entry point: the service runner's (SIGINT/SIGTERM finish the pass in hand)."""
    policy = settings.retention
    layout = KeyLayout(settings.store.prefix, settings.store.partitions)

    async def main(stop: asyncio.Event) -> None:
        log.info("retention_started", policy=str(policy))
        consumer = settings.consumers.consumer
        await serve(settings.store.redis_url, layout, policy, consumer, stage_of, stop)

    run_service("retention", settings.logging.log_level, main)
