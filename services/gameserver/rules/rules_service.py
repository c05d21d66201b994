"""The rules service: a thin FastStream app around `gameserver.rules.command_handler`.

It consumes the command streams of the command partitions it is assigned
(``RENATURE_RULES_PARTITIONS``, all by default; ``rn:{pNN}:commands``, see
`eventstore.CommandPartitions`) with the consumer group ``RULES_GROUP`` (one consumer name
per process, so several instances share the work of a stream): on one Redis every stream at
once (`command_reader.CommandReader`: one ``XREADGROUP``, one batch of what every stream of a
sender had), on a cluster one FastStream subscriber per stream; up to ``MAX_BATCH`` envelopes
per stream and read. It hands each batch to the `CommandHandler`, and answers every envelope
with a `Reply` on the ``reply_to`` pub/sub channel named in its headers, with the request's
correlation id (FastStream's request/reply wire format; see `gameserver.runtime.rules_client`),
then acknowledges the batch. On one Redis an accepted command's append publishes its reply and
acknowledges its message in the same step (`eventstore.Settlement`): a move is then two round
trips of this service (its read and its append), not four. A process that dies mid-batch leaves
its messages pending, and a FastStream subscriber of each stream takes such messages over with
``XAUTOCLAIM`` once they are idle long enough.
"""

from __future__ import annotations

import functools
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec
from faststream import AckPolicy, FastStream
from faststream.message import StreamMessage
from faststream.redis import RedisBroker, StreamSub
from faststream.specification import AsyncAPI
from pydantic import WithJsonSchema
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from eventstore import RedisEventStore, Settlement
from eventstore.keys import format_partitions
from eventstore.redis_client import (
    healing_options,
    is_cluster,
    is_cluster_url,
    plain_url,
    redis_client,
)
from eventstore.redis_values import text
from gameserver.rules.command_handler import BatchRounds, CommandHandler
from gameserver.rules.command_reader import (
    MAX_BATCH,
    READ_BLOCK_MS,
    CommandBatch,
    CommandReader,
    Reading,
    sender_streams,
)
from gameserver.rules.envelopes import BatchMeta
from gameserver.rules.share_watch import watch_shares
from gameserver.runtime import bus, healing, signing
from gameserver.runtime.cluster_broker import SturdyClusterBroker
from gameserver.runtime.logging import configure_logging, get_logger, stdlib_logger
from gameserver.runtime.orphans import OrphanWatch
from gameserver.runtime.seed_vault import RedisSeedVault
from gameserver.runtime.service_runner import serve_forever
from gameserver.runtime.settings import Settings
from gameserver.runtime.signing import Sealer

__all__ = [
    "BatchMeta",
    "CommandHandler",
    "RedisSeedVault",
    "RulesService",
    "create_service",
    "run",
]

log = get_logger("renature.rules")


EnvelopeBatch = Annotated[list[bytes], WithJsonSchema(bus.envelope_schema())]
"""The handler gets the raw bytes of a batch of messages (decoded by msgspec). The docs show the
schema of one message: each stream entry is one envelope, however many are read at once."""


_raw_list = msgspec.json.Decoder(list[msgspec.Raw])

COMMANDS_DESCRIPTION = (
    "Command envelopes (msgspec JSON `CommandEnvelope`), one stream per command "
    "partition: `<prefix>:{pNN}:commands` for NN = 00 .. count - 1 "
    "(RENATURE_COMMAND_PARTITIONS, 4 by default), a game's commands on the stream "
    "of its partition modulo that count; the clock service's timeout claims on "
    "`<prefix>:{pNN}:commands:clock`. Each reply (msgspec JSON `Reply`) goes to "
    "the `reply_to` pub/sub channel of the message's headers, with its "
    "`correlation_id`."
)


async def envelope_bodies(message: StreamMessage[Any]) -> list[bytes]:
    """The JSON of every envelope of a batch, each decoded later by msgspec: FastStream's body
    of a batch is the JSON array of its messages' bodies, taken apart here without building
    Python objects (its default decoder would, and then pydantic would check them)."""
    return [bytes(raw) for raw in _raw_list.decode(message.body)]


# -- the FastStream app ----------------------------------------------------------------------


@dataclass(repr=False)
class RulesService:
    """The broker, the command reader (one Redis) or readers (a cluster), the reclaiming
    subscribers and the handler they call."""

    settings: Settings
    handler: CommandHandler | None = None
    partitions: tuple[int, ...] = field(init=False)
    """The command partitions this instance consumes (``settings.consumers.rules_partitions``)."""
    broker: RedisBroker = field(init=False)
    app: FastStream = field(init=False)
    _redis: Redis | None = field(init=False, default=None)
    sealer: Sealer | None = field(init=False, default=None)  # signs games (with a key)
    _replies: Redis | None = field(init=False, default=None)  # never resends (`startup`)
    _reading: Reading | None = field(init=False, default=None)  # `CommandReader` (one Redis)
    _watching: OrphanWatch | None = field(init=False, default=None)  # `watch_shares`

    @property
    def command_streams(self) -> list[str]:
        """The command streams this instance reads, under the configured key prefix."""
        return [s for some in sender_streams(self.settings, self.partitions).values() for s in some]

    def __post_init__(self) -> None:
        self.partitions = self.settings.commands.parse(self.settings.consumers.rules_partitions)
        # FastStream's RedisClusterBroker (on our SturdyCluster) when REDIS_URL names a
        # cluster (redis+cluster://).
        cluster = is_cluster_url(self.settings.store.redis_url)
        self.broker = (SturdyClusterBroker if cluster else RedisBroker)(
            plain_url(self.settings.store.redis_url),
            logger=stdlib_logger("renature.rules.faststream"),
            log_level=logging.DEBUG,  # per-message lines; the handler logs each command
            # Its reads block (XREADGROUP BLOCK): no socket timeout may cut them (healing.py).
            **healing.BLOCKING_READ_OPTIONS,
            **healing_options(cluster=cluster),
        )
        self._subscribe_all(reading=cluster)
        # Self-healing: back within a second of Redis returning, and a consumer
        # group lost with Redis's data is created again instead of stopping the service.
        healing.fast_reconnect()
        self.app = FastStream(
            self.broker,
            logger=stdlib_logger("renature.rules.app"),
            on_startup=[self.startup],
            after_startup=[self.start_reading],
            on_shutdown=[self.shutdown],
            specification=AsyncAPI(
                self.broker,
                title="Renature rules service",
                version="0.1.0",
                description="Commands in, replies out; events go to the event store.",
            ),
        )

    def _subscribe_all(self, *, reading: bool) -> None:
        """Each command stream's FastStream subscribers (`subscribe`; ``reading``: the ones
        that read new batches too, a cluster's)."""
        for sender, streams in sender_streams(self.settings, self.partitions).items():
            for index, stream in enumerate(streams):
                subscribe(
                    self.broker,
                    self.settings,
                    stream,
                    self._handler_for(sender),
                    functools.partial(self._ensure_groups, [stream]),
                    documented=index == 0 and sender == bus.GATEWAY,
                    reading=reading,
                )

    def _handler_for(self, sender: str) -> Callable[[EnvelopeBatch], Awaitable[None]]:
        async def on_commands(bodies: EnvelopeBatch) -> None:
            """Handle a batch of command envelopes; each `Reply` goes to its ``reply_to``."""
            # From the context, not Context(): FastDepends resolves that in a thread.
            message = self.broker.context.get_local("message")
            await self.on_commands(batch_of(message, bodies), sender)

        return on_commands

    async def on_commands(self, batch: CommandBatch, sender: str = bus.GATEWAY) -> None:
        """Answer and acknowledge a batch from ``sender`` (a failure leaves it pending): what
        the appends did not settle, after them (`settle_the_rest`)."""
        if self.handler is None or self._replies is None or self._redis is None:
            await self.startup()
        assert self.handler is not None
        assert self._replies is not None
        assert self._redis is not None
        rounds = BatchRounds(self.handler, sender, functools.partial(settlement, batch))
        replies = await rounds.answer(batch.bodies)
        await settle_the_rest(self._replies, self._redis, batch, replies, rounds.settled)
        if self.sealer is not None:
            await self.sealer.seal_due(replies, self.handler.cache)

    async def __aenter__(self) -> RulesService:
        """Run the service inside the current event loop (tests, embedding)."""
        await self.startup()
        await self.broker.start()
        await self.start_reading()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop_reading()
        await self.broker.stop()
        await self.shutdown()

    async def start_reading(self) -> None:
        """On one Redis, read every command stream of the instance at once (`CommandReader`;
        a cluster's subscribers read one stream each)."""
        if self._reading is None and not is_cluster_url(self.settings.store.redis_url):
            senders = {
                stream: sender
                for sender, streams in sender_streams(self.settings, self.partitions).items()
                for stream in streams
            }
            recreate = functools.partial(self._ensure_groups, self.command_streams)
            self._reading = Reading.start(
                self.settings.store.redis_url,
                lambda redis: CommandReader(
                    redis, senders, self.settings.consumers.consumer, self.on_commands, recreate
                ),
            )
            if self._redis is not None:  # on a share: the others' streams, while theirs is gone
                self._watching = watch_shares(
                    self.settings, self._redis, self._reading, self.partitions
                )

    async def stop_reading(self) -> None:
        """Stop reading commands; the batches in flight are finished first."""
        watching, self._watching = self._watching, None
        if watching is not None:
            await watching.stop()
        reading, self._reading = self._reading, None
        if reading is not None:
            await reading.stop()

    async def startup(self) -> None:
        """Connect to Redis (replies go there) and the event store (unless a handler was
        injected, as in unit tests).

        The consumer group is created here on every command stream the instance reads, from the
        *start* of the stream, before the subscribers start (FastStream would create it at
        ``$``): commands published before any rules service ever ran are then handled rather
        than silently skipped.
        """
        if self._redis is not None:
            return
        self._redis = redis_client(self.settings.store.redis_url)  # a RedisCluster on a cluster
        # Replies go out on a client that never resends after a failed connection: a reply sent
        # again to a restarted Redis could acknowledge a write that Redis lost (everysec); a
        # lost reply is asked for again with the command id.
        once = healing_options(cluster=is_cluster_url(self.settings.store.redis_url), retries=0)
        self._replies = redis_client(self.settings.store.redis_url, **once)
        await healing.wait_for_redis(self._redis, "rules")  # started before Redis: wait
        if self.handler is not None:
            return
        await self._ensure_groups(self.command_streams)
        store = RedisEventStore(
            self._redis,
            prefix=self.settings.store.prefix,
            partitions=self.settings.store.partitions,
            durability=self.settings.store.durability,
            replicas=self.settings.store.durability_replicas,
        )
        refusals = RedisEventStore(
            self._redis,
            prefix=self.settings.store.prefix,
            partitions=self.settings.store.partitions,
            outcome_ttl_seconds=self.settings.retention.refused_outcome_ttl_s,
            durability=self.settings.store.durability,
            replicas=self.settings.store.durability_replicas,
        )
        self.handler = CommandHandler(
            store=store,
            seeds=RedisSeedVault(self._redis, store.layout),
            cache_size=self.settings.consumers.cache_games,
            refusals=refusals,
        )
        self.sealer = await signing.sealer_for(self.settings.signing, self._redis, store)
        status = await store.check_durability()
        (log.info if status.ok else log.error)("durability", statement=status.statement)
        log.info(
            "rules_service_started",
            consumer=self.settings.consumers.consumer,
            command_partitions=format_partitions(self.partitions),
        )

    async def _ensure_groups(self, streams: Sequence[str]) -> None:
        """Create the rules consumer group (and the stream) on each of ``streams`` from the
        start, unless it exists: at start-up and whenever Redis answers NOGROUP (it came back
        empty)."""
        redis = self._redis or self.broker.config.connection.client
        for stream in streams:
            if await healing.ensure_stream_group(redis, stream, bus.RULES_GROUP):
                log.warning("consumer_group_created", group=bus.RULES_GROUP, stream=stream)

    async def shutdown(self) -> None:
        await self.stop_reading()
        for client in (self._redis, self._replies):
            if client is not None:
                await client.aclose()
        self._redis = self._replies = None


def subscribe(
    broker: RedisBroker,
    settings: Settings,
    stream: str,
    handler: Callable[[EnvelopeBatch], Awaitable[None]],
    recreate: Callable[[], Awaitable[None]],
    *,
    documented: bool,
    reading: bool,
) -> None:
    """The subscribers of one command stream: the batches a dead instance read but never
    acknowledged and, on a cluster, the batches as they come (on one Redis the
    `CommandReader` reads every stream at once). Only the first stream is in the AsyncAPI
    document: the others carry the same messages (its description says so). ``recreate``
    makes the stream's group again when Redis answers NOGROUP."""
    # Acknowledged by `on_commands` (not FastStream: AckPolicy.MANUAL), each message once
    # its reply is out: an accepted command's by its append (`Settlement`), the others'
    # after their replies; a batch that failed stays pending and is taken over by the
    # reclaiming subscriber. The replies are published by `on_commands` too (no_reply).
    consumer = settings.consumers.consumer
    reads = {"max_records": MAX_BATCH, "polling_interval": READ_BLOCK_MS}
    reclaims = {"min_idle_time": settings.consumers.reclaim_idle_ms, "polling_interval": 1000}
    subscribers = [
        broker.subscriber(
            stream=batched_read(consumer, stream, **options),
            decoder=envelope_bodies,
            title="rules:commands" if shown else f"rules:{stream}:reclaim",
            description=COMMANDS_DESCRIPTION if shown else None,
            include_in_schema=shown,
            ack_policy=AckPolicy.MANUAL,
            no_reply=True,
        )
        for options, shown in (
            [(reads, documented), (reclaims, False)] if reading else [(reclaims, documented)]
        )
    ]
    for subscriber in subscribers:
        subscriber(handler)
        healing.heal_missing_group(subscriber, recreate)


async def publish_replies(
    redis: Redis, replies: Sequence[Any], headers: Sequence[dict[str, Any]]
) -> None:
    """Every reply to the channel its command named, in one pipeline: ``SPUBLISH`` to a shard
    channel (a gateway on a Redis Cluster), ``PUBLISH`` to any other."""
    pipe = redis.pipeline(transaction=False)
    for reply, header in zip(replies, headers, strict=True):
        if reply_to := header.get("reply_to"):
            wire = reply_wire(reply, header)
            # By name: a cluster pipeline refuses publish() but routes both by the channel's
            # slot; SPUBLISH reaches the channel's shard alone, PUBLISH every node.
            publish = "SPUBLISH" if bus.is_shard_channel(reply_to) else "PUBLISH"
            pipe.execute_command(publish, reply_to, wire)
    try:
        await pipe.execute()
    except RedisConnectionError:
        if is_cluster(redis):  # a master gone (a failover): read the slot map at the next use
            await redis.aclose()  # (a client that never retries would not, and kept failing)
        raise


def reply_wire(reply: bytes, header: dict[str, Any]) -> bytes:
    """A reply as its command's sender reads it off the channel: FastStream's binary format
    with the request's correlation id (`bus.framed`)."""
    return bus.framed(reply, header.get("correlation_id") or "")


def batch_of(message: StreamMessage[Any], bodies: Sequence[bytes]) -> CommandBatch:
    """A batch FastStream read from one stream: each message's stream and entry id, headers
    and body."""
    stream, ids = message.raw_message["channel"], message.raw_message["message_ids"]
    headers = message.batch_headers or [message.headers] * len(ids)
    return CommandBatch([(stream, text(i)) for i in ids], list(headers), list(bodies))


async def settlement(batch: CommandBatch, index: int, reply: bytes) -> Settlement | None:
    """The settlement of the message at ``index`` of a batch (`Settle`): its reply published
    on its ``reply_to`` and its entry acknowledged by its append. None for a message that
    wants no reply or waits on a shard channel (a cluster's: `SPUBLISH`)."""
    header = batch.headers[index]
    reply_to = header.get("reply_to")
    if not reply_to or bus.is_shard_channel(reply_to):
        return None
    wire = reply_wire(reply, header)
    stream, entry_id = batch.entries[index]
    return Settlement(reply_to, wire, stream, bus.RULES_GROUP, entry_id)


async def settle_the_rest(
    replies_client: Redis,
    redis: Redis,
    batch: CommandBatch,
    replies: Sequence[bytes],
    settled: Collection[int],
) -> None:
    """Publish the replies of a batch's messages whose appends did not (all, on a cluster),
    then acknowledge those messages (their streams' entries)."""
    rest = [i for i in range(len(replies)) if i not in settled]
    if not rest:
        return
    headers = batch.headers
    await publish_replies(replies_client, [replies[i] for i in rest], [headers[i] for i in rest])
    by_stream: dict[str, list[str]] = defaultdict(list)
    for i in rest:
        stream, entry_id = batch.entries[i]
        by_stream[stream].append(entry_id)
    pipe = redis.pipeline(transaction=False)  # one round trip, however many streams
    for stream, ids in by_stream.items():
        pipe.xack(stream, bus.RULES_GROUP, *ids)
    await pipe.execute()


def batched_read(consumer: str, stream: str, **options: Any) -> StreamSub[bool]:
    """A command stream read in batches by ``consumer`` of the rules group."""
    return StreamSub(stream, group=bus.RULES_GROUP, consumer=consumer, batch=True, **options)


def create_service(settings: Settings | None = None) -> RulesService:
    """A rules service configured from ``settings`` (default: the environment)."""
    return RulesService(settings or Settings.from_env())


def run(settings: Settings) -> None:
    """Run the rules service until SIGINT/SIGTERM (FastStream handles the signals)."""

    configure_logging(settings.logging.log_level, service="rules")
    serve_forever(create_service(settings).app.run())


def __getattr__(name: str) -> Any:
    """``app``: the service configured from the environment, built when first asked for, so
    that importing this module builds nothing (``faststream docs gen
    gameserver.rules.rules_service:app`` documents it)."""
    if name == "app":
        return create_service().app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
