"""The clock service: claims a timeout (`Game.timeout_command`) when a seat's time runs out,
for any game with a clock (`Game.clock`) (``renature serve clock``; docs/services.md).

A microservice like the projectors: it follows the partition feeds with its own consumer group
(``clock``), folds each game that moved with the pure core and keeps the game's next deadline
in one sorted set, ``<prefix>:clock:deadlines`` (game id -> deadline in ms since the epoch). The
deadlines live in Redis, not in this process: a restarted (or a second) clock service picks
them up where they are, and its consumer group resumes the feeds where it stopped.

A timer wakes at the earliest deadline (at least every `MAX_SLEEP_S`), re-folds each game that
is due and, if its deadline has really passed, sends the game's timeout claim to the rules
service like any other command. The rules decide it from their own recorded time: if their
clock is a little behind, they refuse it (``clock_running``) and the claim is sent again
`RETRY_MS` later under a new command id. Two clock services may claim the same timeout: the
rules accept the first and refuse the second (the seat's time no longer runs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from redis.asyncio import Redis

from eventstore import FeedEntry, RedisEventStore
from eventstore.redis_client import redis_client
from gameplatform.interface import Clock, HostedGame
from gameserver.runtime import bus, healing
from gameserver.runtime.feed_consumer import FeedConsumer
from gameserver.runtime.logging import get_logger
from gameserver.runtime.rules_client import RulesClient
from gameserver.runtime.service_runner import run_service
from gameserver.runtime.settings import Settings
from gameserver.runtime.state_cache import GameLoader, seat_name

log = get_logger("renature.clock")

GROUP = "clock"
MAX_SLEEP_S = 0.5
"""The timer looks at the deadlines at least this often (a deadline set meanwhile by another
instance is seen within this time)."""
RETRY_MS = 500
"""A claim the rules refused as early is sent again this much later."""
BACKOFF_MS = 5_000
"""A due game whose claim failed otherwise is looked at again this much later."""
COMMAND_TIMEOUT_S = 10.0


def now_ms() -> int:
    return int(time.time() * 1000)


class ClockService:
    """Deadlines from the feeds into Redis, timeouts from Redis to the rules service."""

    def __init__(
        self,
        redis: Redis,
        store: RedisEventStore,
        client: RulesClient,
        consumer: str,
        *,
        reclaim_idle_ms: int = 30_000,
        clock: Callable[[], int] = now_ms,
        cache_size: int = 10_000,
    ) -> None:
        self.redis = redis
        self.store = store
        self.client = client
        self.consumer = consumer
        self.feeds = FeedConsumer(
            store, GROUP, consumer, self.handle, reclaim_idle_ms=reclaim_idle_ms, log=log
        )
        self.clock = clock
        self.cache_size = cache_size
        self.games = GameLoader(store, cache_size, log)
        self.claims = 0  # timeouts sent (for tests and logs)

    @property
    def deadlines_key(self) -> str:
        return f"{self.store.layout.prefix}:clock:deadlines"

    async def setup(self) -> None:
        await self.feeds.setup()

    async def running_clock(self, game_id: str) -> tuple[HostedGame, Clock] | None:
        """The game's game and clock, from its current state (the cached fold plus what was
        appended since, checked against the stream's lineage: `GameLoader`); None for a game
        without a clock (`Game.clock`)."""
        entry = await self.games.load_entry(game_id)
        if entry is None:
            return None
        game = entry.adapter
        clock = game.clock(entry.value)
        return None if clock is None else (game, clock)

    async def track(self, game_id: str) -> int | None:
        """Store the game's next deadline (or drop it: no clock runs); returns it."""
        found = await self.running_clock(game_id)
        due = None if found is None else found[1].deadline_ms
        if due is None:
            await self.redis.zrem(self.deadlines_key, game_id)
        else:
            await self.redis.zadd(self.deadlines_key, {game_id: due})
        return due

    async def handle(self, entries: Sequence[FeedEntry]) -> None:
        """Track every game the entries touch, then acknowledge them."""
        for game_id in dict.fromkeys(entry.game_id for entry in entries):
            await self.track(game_id)
        await self.feeds.ack(entries)

    async def poll(self, block_ms: int) -> int:
        return await self.feeds.poll(block_ms)

    async def reclaim(self) -> None:
        """Take over entries another (dead) clock service left pending."""
        await self.feeds.reclaim()

    async def fire(self) -> float:
        """Claim every timeout that is due; the seconds until the next deadline."""
        now = self.clock()
        due = await self.redis.zrangebyscore(self.deadlines_key, "-inf", now, start=0, num=100)
        for raw in due:
            game_id = raw.decode() if isinstance(raw, bytes) else str(raw)
            await self.claim(game_id, now)
        head = await self.redis.zrange(self.deadlines_key, 0, 0, withscores=True)
        if not head:
            return MAX_SLEEP_S
        return max(0.0, min(MAX_SLEEP_S, (float(head[0][1]) - self.clock()) / 1000))

    async def claim(self, game_id: str, now: int) -> None:
        found = await self.running_clock(game_id)
        due = None if found is None else found[1].deadline_ms
        seat = None if found is None else found[1].running_for
        command = None if found is None or seat is None else found[0].timeout_command(seat)
        if found is None or due is None or seat is None or command is None:
            await self.redis.zrem(self.deadlines_key, game_id)
            return
        if due > now:  # the game moved on: a later deadline
            await self.redis.zadd(self.deadlines_key, {game_id: due})
            return
        game, clock = found
        envelope = bus.CommandEnvelope(
            game_id=game_id,
            command_id=f"timeout:{seat}:{clock.turn_started_ms}:{now}",
            command=command,
            seat=None,
            game=game.name,
        )
        self.claims += 1
        name = seat_name(self.games.cache.get(game_id), seat)
        try:
            reply = await self.client.send(envelope, COMMAND_TIMEOUT_S)
        except TimeoutError:
            log.warning("timeout_claim_unanswered", game_id=game_id, seat=seat, seat_name=name)
            await self.redis.zadd(self.deadlines_key, {game_id: now + RETRY_MS})
            return
        log.info(
            "timeout_claimed",
            game_id=game_id,
            seat=seat,
            seat_name=name,
            status=reply.status,
            code=reply.code,
        )
        if reply.status == "accepted":
            await self.track(game_id)
        elif reply.code == "clock_running":  # the rules' clock is a little behind ours
            await self.redis.zadd(self.deadlines_key, {game_id: now + RETRY_MS})
        elif await self.track(game_id) == due:  # refused for good at this deadline
            await self.redis.zadd(self.deadlines_key, {game_id: now + BACKOFF_MS})

    async def run(self, stop: asyncio.Event, reclaim_every: float = 10.0) -> None:
        """Follow the feeds and fire timeouts until ``stop`` is set; waits for Redis when it
        is away (nothing is lost: entries stay pending, deadlines stay in Redis)."""

        async def fire_then_block() -> int:
            return max(1, int(await self.fire() * 1000))

        await self.feeds.run(stop, reclaim_every=reclaim_every, before_poll=fire_then_block)


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    """Run the clock service until ``stop`` is set."""
    # Its feed reads block: no socket timeout may cut them (healing.py).
    redis = redis_client(settings.store.redis_url, **healing.BLOCKING_READ_OPTIONS)
    try:
        await healing.wait_for_redis(redis, "clock")
        store = RedisEventStore(
            redis, prefix=settings.store.prefix, partitions=settings.store.partitions
        )
        client = RulesClient(redis, streams=bus.streams_of(settings.commands, bus.CLOCK))
        try:
            service = ClockService(
                redis,
                store,
                client,
                settings.consumers.consumer,
                reclaim_idle_ms=settings.consumers.reclaim_idle_ms,
            )
            await service.run(stop, reclaim_every=settings.consumers.reclaim_interval_s)
        finally:
            await client.aclose()
    finally:
        await redis.aclose()


def run(settings: Settings) -> None:
    """Blocking entry point used by ``renature serve clock``."""
    run_service("clock", settings.logging.log_level, lambda stop: serve(settings, stop))
