"""The projector runner shared by the board and score projections.

A projector consumes the partition feeds of the event store with its own consumer group, folds
each game's events into a small in-memory value (cached per game, rebuilt from the game stream
when missing or behind) and writes a read model per game:

    <prefix>:{pNN}:<projection>:<game_id>   hash  {version: <int>, model: <msgspec JSON>}

The hash carries the game's partition as its hash tag, like every key of the game. The model
and the version it reflects are written together by one Lua script that only writes when the
new version is greater than the stored one. That makes delivery "at least once" harmless: a
redelivered or reclaimed entry, or an entry a second consumer of the same group handles late,
can never apply an event twice or move a model back in time. Models are snapshots (the whole
value at a version), never increments, for the same reason.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from typing import Generic, TypeVar

import msgspec
from redis.asyncio import Redis

from eventstore import FeedEntry, KeyLayout, RedisEventStore
from eventstore.keys import parse_partitions
from eventstore.redis_client import is_cluster_url, redis_client
from gameserver.projectors.folds import Folds, Projection
from gameserver.projectors.read_models import Ack, ReadModels, Write
from gameserver.projectors.together import Folded, Together
from gameserver.runtime import healing
from gameserver.runtime.feed_consumer import FeedConsumer
from gameserver.runtime.logging import configure_logging, debugging, get_logger
from gameserver.runtime.orphans import OrphanWatch
from gameserver.runtime.service_runner import run_service
from gameserver.runtime.settings import Settings
from gameserver.runtime.state_cache import (
    DEFAULT_MAX_GAMES,
    Cached,
    StateCache,
)

__all__ = [
    "Projection",
    "Projector",
    "Together",
    "create_projector",
    "json_encoder",
    "model_key",
    "rebuild_only",
    "run",
    "serve",
]

PROJECTOR_LOG = "renature.projector"
log = get_logger(PROJECTOR_LOG)

json_encoder = msgspec.json.Encoder()

F = TypeVar("F")


def model_key(layout: KeyLayout, name: str, game_id: str) -> str:
    """``<prefix>:{pNN}:<name>:<game_id>``: the read model shares the game's hash slot."""
    return layout.model_key(name, game_id)


class Projector(Generic[F]):
    """Feeds in, read models out; any number of instances may share one consumer group. The
    projection may be several folded `Together` (one group, one fold and write per game)."""

    def __init__(
        self,
        store: RedisEventStore,
        redis: Redis,
        projection: Projection[F] | Together,
        consumer: str,
        *,
        batch: int = 200,
        reclaim_idle_ms: int = 30_000,
        cache_size: int = DEFAULT_MAX_GAMES,
        partitions: Sequence[int] | None = None,
        linger_ms: int = 0,
    ) -> None:
        self.store = store
        self.redis = redis
        self.projection = projection
        self.cache_size = cache_size
        self.together = projection if isinstance(projection, Together) else Together([projection])
        self.folds = Folds(store, self.together, cache_size, log.bind(projection=projection.name))
        self.cache: StateCache[Folded] = self.folds.cache
        self.models = ReadModels(redis, store.layout, *self.together.names)
        self._log = log.bind(projection=projection.name, consumer=consumer)
        self.feeds = FeedConsumer(
            store,
            projection.group,
            consumer,
            self.process,
            partitions=partitions,
            batch=batch,
            reclaim_idle_ms=reclaim_idle_ms,
            linger_ms=linger_ms,
            log=self._log,
        )

    @property
    def partitions(self) -> tuple[int, ...]:
        """The feeds this instance reads (instances may split the partitions between them;
        one on a share also reads a gone share's, `watch_shares`)."""
        return self.feeds.partitions

    # -- keys and reading --------------------------------------------------------------------

    def key(self, game_id: str) -> str:
        return self.models.key(game_id)

    async def read_model(self, game_id: str) -> tuple[int, bytes] | None:
        """The stored model of a game and the version it reflects, if there is one."""
        return await self.models.read(game_id)

    # -- running -----------------------------------------------------------------------------

    async def setup(self) -> None:
        """Create the group on every feed, from the start so a new projection sees everything."""
        await self.feeds.setup()

    async def run(
        self, stop: asyncio.Event, block_ms: int = 1000, reclaim_every: float = 10.0
    ) -> None:
        """Project until ``stop`` is set: take over stale pending entries, then follow the feeds,
        healing whenever Redis goes away (`FeedConsumer.run`)."""
        await self.feeds.run(stop, block_ms=block_ms, reclaim_every=reclaim_every)

    async def poll(self, block_ms: int | None = None) -> int:
        """Read and project one batch of new feed entries; returns how many were read."""
        return await self.feeds.poll(block_ms)

    async def reclaim(self, min_idle_ms: int | None = None) -> int:
        """Take over and project entries pending too long with a (probably dead) consumer."""
        return await self.feeds.reclaim(min_idle_ms)

    async def process(self, entries: Sequence[FeedEntry]) -> None:
        """Project a batch; the entries of each game whose model was written (or found as new)
        are acknowledged.

        A game whose events continue its cached fold costs no read: its model's write checks
        the event against the stream and acknowledges its entries in the same script. The
        others (no fold cached, a gap, a redelivery) first read the stored versions of their
        models, together. So a batch is one round trip after its read, two when a game was
        not cached. A game that fails (Redis hiccup, an undecodable event) is logged and left
        pending, so it is retried through `reclaim`; the other games of the batch go on.
        """
        by_game: dict[str, list[FeedEntry]] = defaultdict(list)
        for entry in entries:
            by_game[entry.game_id].append(entry)
        writes: list[tuple[str, Cached[Folded]]] = []
        behind: list[str] = []
        for game_id, game_entries in by_game.items():
            try:
                followed = self.folds.follow(game_id, game_entries)
            except Exception:  # an undecodable event: `advance` finds it again, and replays
                followed = None
            if followed is None:
                behind.append(game_id)
            else:
                writes.append((game_id, followed))
        done = await self._advance(behind, by_game, writes)
        unacked = await self._write(writes, by_game)
        rest = [entry for game_id in [*done, *unacked] for entry in by_game[game_id]]
        if rest:
            await self.feeds.ack(rest)

    async def _write(
        self, writes: list[tuple[str, Cached[Folded]]], by_game: dict[str, list[FeedEntry]]
    ) -> list[str]:
        """Write the models, each script acknowledging its game's entries; returns the games
        written that are still to be acknowledged (their write refused, then replayed and
        written). A game whose write failed is left pending."""
        if not writes:
            return []
        acks = [_ack_of(by_game[game_id], self.feeds.group) for game_id, _ in writes]
        results = await self.models.write_many([self._write_call(*w) for w in writes], acks)
        unacked: list[str] = []
        for (game_id, cached), result in zip(writes, results, strict=True):
            if result == -1:  # the fold is not on the stream's history: replay, write
                try:
                    result = await self._store_model(game_id, await self.folds.replay(game_id))
                except Exception as error:
                    result = error
                if result in (0, 1):
                    unacked.append(game_id)
            if isinstance(result, Exception) or result == -1:
                self._log.error("projection_failed", game_id=game_id, error=str(result))
            elif result and debugging(PROJECTOR_LOG):
                self._log.debug("model_written", game_id=game_id, version=cached.version)
        return unacked

    async def _advance(
        self,
        games: list[str],
        by_game: dict[str, list[FeedEntry]],
        writes: list[tuple[str, Cached[Folded]]],
    ) -> list[str]:
        """Fold the games whose cached fold the batch does not continue, after reading their
        stored models' versions (one round trip): each fold to write goes to ``writes``; the
        games with nothing to write are returned (their entries to acknowledge)."""
        if not games:
            return []
        nothing: list[str] = []
        stored_models = await self.models.stored(games)
        for game_id, (stored, model_hash) in zip(games, stored_models, strict=True):
            try:
                cached = await self.folds.advance(game_id, by_game[game_id], stored, model_hash)
            except Exception:
                # A fold that fails (events folded onto a lost history, an undecodable event):
                # replay the game from its stream; if that fails too, leave it pending.
                self._log.exception("projection_failed", game_id=game_id)
                try:
                    cached = await self.folds.replay(game_id)
                except Exception:
                    self._log.exception("projection_replay_failed", game_id=game_id)
                    continue
            if cached is not None:
                writes.append((game_id, cached))
            else:
                nothing.append(game_id)
        return nothing

    # -- rebuilding --------------------------------------------------------------------------

    async def rebuild(self) -> int:
        """Drop every model of this projection and rebuild each game from its stream.

        Safe while other instances run: a model they write meanwhile is either older (and
        then replaced) or newer (and then kept) thanks to the conditional write.
        """
        games = await self.store.list_games()
        await self.models.drop_all(games)
        self.cache.clear()
        for game_id in games:
            cached = await self.folds.catch_up(game_id, None)
            if cached is not None:
                self.cache.remember(game_id, cached)
                await self._store_model(game_id, cached)
        self._log.info("projection_rebuilt", games=len(games))
        return len(games)

    # -- internals ---------------------------------------------------------------------------

    def _write_call(self, game_id: str, cached: Cached[Folded]) -> Write:
        """The model write of a fold (rendered by its game's projection)."""
        models = self.together.render_each(cached.adapter, cached.value)
        return game_id, cached.version, models, cached.last_hash

    async def _store_model(self, game_id: str, cached: Cached[Folded] | None) -> int:
        """Write the model: 1 written, 0 kept (as new), -1 refused (not on the stream)."""
        if cached is None:
            return 0
        written = await self.models.write(self._write_call(game_id, cached))
        if written == 1 and debugging(PROJECTOR_LOG):
            self._log.debug("model_written", game_id=game_id, version=cached.version)
        return written


def _ack_of(entries: Sequence[FeedEntry], group: str) -> Ack:
    """The acknowledgement of one game's entries (all on its partition's feed)."""
    return entries[0].partition, group, [entry.entry_id for entry in entries]


def create_projector(
    settings: Settings, redis: Redis, projection: Projection[F] | Together
) -> Projector[F]:
    """A projector configured from ``settings`` on a bytes Redis client."""
    store = RedisEventStore(
        redis, prefix=settings.store.prefix, partitions=settings.store.partitions
    )
    return Projector(
        store,
        redis,
        projection,
        settings.consumers.consumer,
        reclaim_idle_ms=settings.consumers.reclaim_idle_ms,
        cache_size=settings.consumers.cache_games,
        partitions=parse_partitions(
            settings.consumers.projector_partitions, settings.store.partitions
        ),
        linger_ms=settings.consumers.projector_linger_ms,
    )


async def serve(
    settings: Settings,
    projection: Projection[F] | Together,
    stop: asyncio.Event,
    rebuild: bool = False,
) -> None:
    """Run one projector until ``stop`` is set; optionally rebuild its models first."""
    # Its reads block (XREADGROUP BLOCK): no socket timeout may cut them (healing.py).
    redis = redis_client(settings.store.redis_url, **healing.BLOCKING_READ_OPTIONS)  # or a cluster
    try:
        await healing.wait_for_redis(redis, projection.name)  # started before Redis: wait
        projector = create_projector(settings, redis, projection)
        if rebuild:
            await projector.rebuild()
        watching = watch_shares(settings, redis, projector)
        try:
            await projector.run(stop, reclaim_every=settings.consumers.reclaim_interval_s)
        finally:
            if watching is not None:
                await watching.stop()
    finally:
        await redis.aclose()


def watch_shares(settings: Settings, redis: Redis, projector: Projector[F]) -> OrphanWatch | None:
    """On a share of the feeds (one Redis), a running `OrphanWatch` that reads another share's
    feed while that share's projector is gone: new entries from the next read on, what the gone
    one had read by the periodic reclaim. A cluster's feeds are not adopted (its reads of the
    feeds stay in flight across polls)."""
    consumer = projector.feeds
    others = sorted(set(projector.store.partitions()) - set(consumer.partitions))
    if not others or is_cluster_url(settings.store.redis_url):
        return None
    feeds = {projector.store.feed_key(p): p for p in others}

    async def adopt(feed: str) -> None:
        consumer.adopt(feeds[feed])

    watch = OrphanWatch(
        redis,
        consumer.group,
        consumer.consumer,
        settings.consumers.reclaim_idle_ms,
        list(feeds),
        adopt,
        lambda feed: consumer.release(feeds[feed]),
    )
    return watch.start()


async def _rebuild(settings: Settings, projection: Projection[F] | Together) -> int:
    redis = redis_client(settings.store.redis_url)
    try:
        return await create_projector(settings, redis, projection).rebuild()
    finally:
        await redis.aclose()


def rebuild_only(settings: Settings, projection: Projection[F] | Together) -> int:
    """Drop and rebuild every model of ``projection``, then return (no feed consumption)."""
    configure_logging(settings.logging.log_level, service=projection.name)
    return asyncio.run(_rebuild(settings, projection))


def run(settings: Settings, projection: Projection[F] | Together, rebuild: bool = False) -> None:
    """Blocking entry point used by ``renature serve models|board|score``."""

    async def main(stop: asyncio.Event) -> None:
        await serve(settings, projection, stop, rebuild)

    run_service(projection.name, settings.logging.log_level, main)
