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
import contextlib
import signal
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from eventstore import FeedEntry, RedisEventStore, StoreError
from gameplatform.interface import Clock
from gameserver.runtime import bus, healing
from gameserver.runtime.logging import configure_logging, get_logger
from gameserver.runtime.rules_client import RulesClient
from gameserver.runtime.settings import Settings
from gameserver.runtime.state_cache import AnyGame, GameLoader

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
RETRY_SECONDS = 0.2


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
        self.reclaim_idle_ms = reclaim_idle_ms
        self.clock = clock
        self.cache_size = cache_size
        self.games = GameLoader(store, cache_size, log)
        self.claims = 0  # timeouts sent (for tests and logs)

    @property
    def deadlines_key(self) -> str:
        return f"{self.store.layout.prefix}:clock:deadlines"

    async def setup(self) -> None:
        for partition in self.store.partitions():
            await self.store.ensure_group(partition, GROUP, start_id="0")

    async def running_clock(self, game_id: str) -> tuple[AnyGame, Clock] | None:
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

    async def handle(self, entries: list[FeedEntry]) -> None:
        """Track every game the entries touch, then acknowledge them."""
        for game_id in dict.fromkeys(entry.game_id for entry in entries):
            await self.track(game_id)
        by_partition: dict[int, list[str]] = {}
        for entry in entries:
            by_partition.setdefault(entry.partition, []).append(entry.entry_id)
        for partition, ids in by_partition.items():
            await self.store.ack(partition, GROUP, ids)

    async def poll(self, block_ms: int) -> int:
        entries = await self.store.read_group(
            GROUP, self.consumer, self.store.partitions(), block_ms=block_ms
        )
        await self.handle(entries)
        return len(entries)

    async def reclaim(self) -> None:
        """Take over entries another (dead) clock service left pending."""
        for partition in self.store.partitions():
            claimed = await self.store.autoclaim(
                partition, GROUP, self.consumer, self.reclaim_idle_ms
            )
            await self.handle(claimed)

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
        try:
            reply = await self.client.send(envelope, COMMAND_TIMEOUT_S)
        except TimeoutError:
            log.warning("timeout_claim_unanswered", game_id=game_id, seat=seat)
            await self.redis.zadd(self.deadlines_key, {game_id: now + RETRY_MS})
            return
        log.info(
            "timeout_claimed", game_id=game_id, seat=seat, status=reply.status, code=reply.code
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
        ready = False
        last_reclaim = time.monotonic()
        while not stop.is_set():
            try:
                if not ready:
                    await self.setup()
                    await self.reclaim()
                    ready = True
                    log.info("clock_service_started", consumer=self.consumer)
                sleep = await self.fire()
                await self.poll(block_ms=max(1, int(sleep * 1000)))
                if time.monotonic() - last_reclaim >= reclaim_every:
                    await self.reclaim()
                    last_reclaim = time.monotonic()
            except (StoreError, RedisError, OSError) as error:
                if "NOGROUP" in str(error):
                    ready = False
                log.warning("redis_unavailable", error=str(error))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=RETRY_SECONDS)
        log.info("clock_service_stopped")


async def serve(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Run the clock service until ``stop`` is set (or SIGINT/SIGTERM when none is given)."""
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
    # Its feed reads block: no socket timeout may cut them (healing.py).
    redis = Redis.from_url(settings.redis_url, **healing.BLOCKING_READ_OPTIONS)
    try:
        await healing.wait_for_redis(redis, "clock")
        store = RedisEventStore(redis, prefix=settings.prefix, partitions=settings.partitions)
        client = RulesClient(redis, streams=settings.commands)
        try:
            service = ClockService(
                redis, store, client, settings.consumer, reclaim_idle_ms=settings.reclaim_idle_ms
            )
            await service.run(stop, reclaim_every=settings.reclaim_interval_s)
        finally:
            await client.aclose()
    finally:
        await redis.aclose()


def run(settings: Settings) -> None:
    """Blocking entry point used by ``renature serve clock``."""
    configure_logging(settings.log_level, service="clock")
    asyncio.run(serve(settings))
