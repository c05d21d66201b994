"""How to send a command to the rules service and await its reply.

```python
reply = await send_command(broker, envelope, timeout=5.0)      # a connected RedisBroker
reply = await send_command(redis_client, envelope, timeout=5.0)  # or a plain redis.asyncio.Redis

async with RulesClient(redis_client) as client:                  # many commands, one channel
    reply = await client.send(envelope, timeout=5.0)
```

Both use FastStream's request/reply wire format: the envelope (msgspec JSON) is added to the
command stream of its game's partition (``rn:{pNN}:commands``, `CommandPartitions.stream_of`)
in FastStream's binary message format with a ``reply_to`` header naming a
fresh pub/sub channel, to which the caller subscribed *before* publishing; the rules service
publishes the encoded `Reply` there. A reply published while nobody listens is lost, which is
harmless: the outcome is stored under the command id, and sending the same envelope again
(same ``command_id``) returns it without deciding the command twice. That is also what to do
after `CommandTimeout`.

`send_command` subscribes a fresh channel for every command, which suits a one-off command.
A long-lived sender (the gateway, the benchmark) uses `RulesClient`: one channel subscribed for
the client's whole life, replies matched to their requests by correlation id, so a command
costs one ``XADD`` and nothing else.

That channel must outlive anything Redis does, or every later command of the process times
out (as a gateway's did in the chaos run, its listener gone without a word after a Redis pause
and kill): whatever a read raises (redis-py's errors and any other it lets through after a
lost connection), the subscription is dropped and made again from scratch, and every command
still waiting is sent again. The subscription's connection, on a client of its own, never
retries, so that every failure reaches the listener (redis-py would otherwise connect it again
inside a read, unseen, and nothing would ask for the replies published meanwhile); a listener that
ended anyway is started again by the next command; and a channel quiet for `PROBE_AFTER_S`
publishes a probe to itself, so a subscription Redis no longer holds (nothing raised, nothing
arriving) is found and made again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import uuid
from typing import Any, cast

from faststream.redis import RedisBroker
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterPubSub, RedisCluster

from eventstore import CommandPartitions
from eventstore.lanes import Lanes
from eventstore.redis_client import cluster_beside, is_cluster, plain_beside
from gameserver.runtime import bus
from gameserver.runtime.logging import get_logger

log = get_logger("renature.rules_client")

RESUBSCRIBE_WAIT_S = 1.0
"""How long a command waits for the reply channel to be subscribed again after a lost
connection before it is sent anyway (Redis still away: it fails at once, a 503)."""
STREAMS_REMEMBERED = 65_536
"""Games whose command stream a client remembers (it is worked out from the game id)."""
PROBE_AFTER_S = 5.0
"""A reply channel that carried nothing this long publishes a probe to itself; when the probe
has not come back by the next look, the channel is subscribed again from scratch."""
PROBE = b"rn:reply-channel-probe"
"""What a probe carries (never a reply: a reply is in FastStream's binary format)."""
COMMAND_STREAM_MAXLEN = 100_000
"""A command stream is a queue, not a record (events are the record): keep it bounded."""


RESEND_AFTER_S = 0.05
"""On a Redis Cluster, the pause before a command whose connection failed is sent again (once):
redis-py's cluster client answers one connection's failure by reconnecting the node's other
connections, and the commands in flight on them fail with "Connection closed by server." (a
plain client retries a failed connection itself, `eventstore.redis_client.healing_options`). A
command sent twice is decided once (its command id; the second answer finds no one waiting)."""

Outgoing = tuple[str, bytes, "asyncio.Future[bytes]", bool]
"""A queued command: its stream, its message, the future of its reply, sent before."""


class CommandTimeout(TimeoutError):
    """No reply in time. The command may or may not have been applied: resend it with the same
    command id to learn its outcome."""


async def send_command(
    broker_or_redis: RedisBroker | Redis,
    envelope: bus.CommandEnvelope,
    timeout: float = 10.0,
    *,
    streams: CommandPartitions = bus.COMMAND_PARTITIONS,
) -> bus.Reply:
    """Publish ``envelope`` to the rules service on the command stream of its game (``streams``
    must be the deployment's, ``Settings.commands``) and return its `Reply`.

    Raises `CommandTimeout` when no reply arrives within ``timeout`` seconds.
    """
    body = bus.encoder.encode(envelope)
    if isinstance(broker_or_redis, RedisBroker):
        try:
            message = await broker_or_redis.request(
                body,
                stream=streams.stream_of(envelope.game_id),
                maxlen=COMMAND_STREAM_MAXLEN,
                correlation_id=envelope.command_id,
                timeout=timeout,
            )
        except TimeoutError as error:
            raise CommandTimeout(_timeout_message(envelope, timeout)) from error
        return bus.reply_decoder.decode(message.body)
    async with RulesClient(broker_or_redis, streams=streams) as client:  # a channel for one
        return await client.send(envelope, timeout)


# long: one reply channel's whole life (send, listen, heal, probe, resend)
class RulesClient:
    """Sends commands over one reply channel subscribed for the client's whole life.

    Replies come back on ``rn:reply:<random>`` with the correlation id of their request; a
    listener task hands each to the request awaiting it. On a Redis Cluster the channel is a
    shard channel, ``rn:reply:shard:<random>`` (``SSUBSCRIBE``; the rules service answers with
    ``SPUBLISH``), so that replies reach the one shard of the channel's slot, not every node.
    Commands sent while an earlier ``XADD`` is on its way are queued and go out together in one
    pipeline, so a busy client (the gateway under load) pays one round trip for many commands;
    each goes to the command stream of its game's partition (``streams``, the deployment's
    `CommandPartitions`). A command sent while the channel is subscribed again waits for it
    (`RESUBSCRIBE_WAIT_S` at most), so the first command after Redis returns keeps its reply;
    and whenever the channel is subscribed again, every command still waiting for its reply is
    sent once more (the same envelope: the rules service answers a command id it has decided
    with the stored outcome), since a reply published while the channel was lost is lost. The
    channel outlives whatever a read raises (module text).
    """

    def __init__(
        self,
        redis: Redis,
        *,
        maxlen: int = COMMAND_STREAM_MAXLEN,
        streams: CommandPartitions = bus.COMMAND_PARTITIONS,
    ) -> None:
        self._redis = redis
        self._lanes = Lanes(redis)
        self._maxlen = maxlen
        self._streams = streams
        # On a Redis Cluster a shard channel (SSUBSCRIBE, SPUBLISH): a reply then travels
        # within the shard of the channel's slot instead of being broadcast to every node.
        sharded = is_cluster(redis)
        self.channel = bus.reply_channel(uuid.uuid4().hex, sharded=sharded)
        cluster = cast("RedisCluster", redis)
        self._shards = ShardSubscription(cluster, self.channel) if sharded else None
        # The subscription's own client, whose connection never retries: redis-py otherwise
        # connects a failed subscription again inside a read and subscribes it again, and the
        # listener, seeing no error, never asks for the replies published meanwhile (a 504).
        self._replies = None if sharded else plain_beside(redis, retries=0)
        self._waiting: dict[str, Outgoing] = {}  # by correlation id: sent again when back
        self._ids = itertools.count()
        """Correlation ids: unique on this client's own channel, so a count will do (a UUID
        each, from ``os.urandom``, was 2% of the gateway's CPU per move)."""
        self._stream_of = functools.lru_cache(maxsize=STREAMS_REMEMBERED)(streams.stream_of)
        self._outbox: list[Outgoing] = []
        self._sender: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self._subscribed = asyncio.Event()

    async def __aenter__(self) -> RulesClient:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Subscribe the reply channel (before any command can be sent) and start listening."""
        async with self._starting:
            if self._listener is not None and not self._listener.done():
                return
            if self._listener is not None:  # it ended: it never should (see the class text)
                ended = self._listener
                error = None if ended.cancelled() else ended.exception()
                log.error("reply_listener_ended", error=repr(error))
                self._subscribed.clear()
            pubsub = await self._subscribe()
            self._subscribed.set()
            self._listener = asyncio.create_task(self._listen(pubsub), name=self.channel)

    async def _subscribe(self) -> PubSub | None:
        """Subscribe afresh: a new `PubSub` (None on a cluster: `ShardSubscription`)."""
        pubsub: PubSub | None = None
        if self._shards is not None:
            await self._shards.subscribe()
        else:
            assert self._replies is not None
            pubsub = self._replies.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
            except BaseException:
                await _close_quietly(pubsub)
                raise
        return pubsub

    async def aclose(self) -> None:
        """Stop listening; requests still waiting get `CommandTimeout` at their deadline."""
        for task in (self._listener, self._sender):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._listener = self._sender = None
        if self._replies is not None:
            await self._replies.aclose()

    async def send(self, envelope: bus.CommandEnvelope, timeout: float = 10.0) -> bus.Reply:
        """Publish ``envelope`` and return its `Reply`; `CommandTimeout` after ``timeout`` s.
        Redis errors while publishing are raised (redis-py's ``ConnectionError`` and so on)."""
        if self._listener is None or self._listener.done():
            await self.start()
        if not self._subscribed.is_set():  # the listener is reconnecting: wait a moment
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subscribed.wait(), min(timeout, RESUBSCRIBE_WAIT_S))
        correlation_id = str(next(self._ids))
        message = bus.framed(bus.encoder.encode(envelope), correlation_id, self.channel)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bytes] = loop.create_future()
        outgoing = (self._stream_of(envelope.game_id), message, waiter, False)
        self._waiting[correlation_id] = outgoing
        self._queue(outgoing)
        # The waiter itself times out (asyncio.wait_for adds a future, callbacks and a check).
        expiry = loop.call_later(timeout, _expire, waiter, envelope, timeout)
        try:
            data = await waiter
        finally:
            expiry.cancel()
            self._waiting.pop(correlation_id, None)
        return bus.reply_decoder.decode(data)

    def _queue(self, *outgoing: Outgoing) -> None:
        self._outbox.extend(outgoing)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_queued())

    def _back(self) -> None:
        """The channel is subscribed again: every command still waiting is sent once more (its
        reply may have been published while nobody listened)."""
        log.info("reply_channel_back", resent=len(self._waiting))
        self._subscribed.set()
        again = [(s, m, w, False) for s, m, w, _ in self._waiting.values() if not w.done()]
        if again:
            self._queue(*again)

    async def _send_queued(self) -> None:
        """XADD everything queued, one pipeline per round trip, until the queue is empty; on a
        cluster a command whose connection failed is sent once more (`RESEND_AFTER_S`)."""
        while self._outbox:
            batch, self._outbox = self._outbox, []
            results = await _xadd_all(self._lanes, batch, self._maxlen)
            for entry, result in zip(batch, results, strict=True):
                if not isinstance(result, Exception) or entry[2].done():
                    continue
                if (
                    self._shards
                    and isinstance(result, redis_errors.ConnectionError)
                    and not entry[3]
                ):
                    self._outbox.append((*entry[:3], True))
                else:
                    entry[2].set_exception(result)
            if self._outbox and all(entry[3] for entry in self._outbox):
                await asyncio.sleep(RESEND_AFTER_S)

    async def _listen(self, pubsub: PubSub | None) -> None:
        """Hand each reply to its request, for the client's whole life (the class text)."""
        loop = asyncio.get_running_loop()
        heard = loop.time()  # when the channel last carried something
        probed: float | None = None  # when a probe unanswered yet was sent
        try:
            while True:
                try:
                    if pubsub is None and self._shards is None:
                        pubsub = await self._subscribe()
                        self._back()
                    if probed is None and loop.time() - heard > PROBE_AFTER_S:
                        await _probe(self._redis, self.channel, self._shards is not None)
                        probed = loop.time()
                    elif probed is not None and loop.time() - probed > PROBE_AFTER_S:
                        raise redis_errors.ConnectionError("the reply channel's probe was lost")
                    received = await self._receive(pubsub)
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if task is None or task.cancelling():
                        raise  # aclose(): this task is being cancelled
                    await self._lost(pubsub, "a CancelledError leaked from a read")
                    pubsub = None
                    probed, heard = None, loop.time()
                    continue
                except Exception as error:  # whatever it is, the channel must live on
                    await self._lost(pubsub, repr(error))
                    pubsub = None
                    probed, heard = None, loop.time()
                    continue
                if not self._subscribed.is_set():  # reconnected: subscribed again
                    self._back()
                if received is None:
                    continue
                heard, probed = loop.time(), None
                if received.get("type") not in ("message", "smessage"):
                    continue
                if received["data"] == PROBE:
                    continue
                data, headers = BinaryMessageFormatV1.parse(received["data"])
                waiting = self._waiting.pop(str(headers.get("correlation_id", "")), None)
                if waiting is not None and not waiting[2].done():
                    waiting[2].set_result(data)
        finally:
            if pubsub is not None:
                await _close_quietly(pubsub)
            if self._shards is not None:
                await self._shards.aclose()

    async def _lost(self, pubsub: PubSub | None, error: str) -> None:
        """The subscription failed: drop it (the next turn subscribes afresh) after a pause."""
        if self._subscribed.is_set():
            log.warning("reply_channel_lost", error=error)
        self._subscribed.clear()
        if pubsub is not None:
            await _close_quietly(pubsub)
        if self._shards is not None:
            await self._shards.close()
        await asyncio.sleep(0.05)  # the client's retries back off already

    async def _receive(self, pubsub: PubSub | None) -> dict[str, Any] | None:
        """The next message of the reply channel, or None after a second without one."""
        if self._shards is not None:
            return await self._shards.get_message(timeout=1.0)
        assert pubsub is not None
        return await _next_message(pubsub, 1.0)


class ShardSubscription:
    """A reply channel as a shard channel of a Redis Cluster: ``SSUBSCRIBE`` on the master of
    the channel's slot (redis-py's `ClusterPubSub`), on a cluster client of its own (the
    commands' client's nodes and credentials): redis-py's cluster pub/sub borrows connections
    from its client's pools, and a refresh of the slot map marks every connection of a client
    for reconnection, so the subscription and the commands keep apart. When its connection
    fails, or redis-py drops it, the next `get_message` subscribes it again from the slot map
    read afresh: after a failover the replica that took the slot over serves it (redis-py's
    own reconciliation only runs once something else has refreshed the slot map)."""

    def __init__(self, commands: RedisCluster, channel: str) -> None:
        self._commands = commands
        self._cluster: RedisCluster | None = None
        self._channel = channel
        self._pubsub: ClusterPubSub | None = None
        self._failed = False

    async def subscribe(self) -> None:
        """Subscribe the channel where its slot is served now."""
        await self.close()
        if self._cluster is None:
            self._cluster = await cluster_beside(self._commands)
            await self._cluster.initialize()
        elif self._failed:  # the slot may have moved: ask the cluster again
            await self._cluster.nodes_manager.initialize()
        pubsub = self._cluster.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.ssubscribe(self._channel)
        except BaseException:
            await pubsub.aclose()
            raise
        self._pubsub, self._failed = pubsub, False

    async def get_message(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None after ``timeout`` s; redis-py's ``ConnectionError`` when
        the subscription is lost (the next call subscribes again)."""
        if self._pubsub is None:
            await self.subscribe()
        assert self._pubsub is not None
        try:
            if not self._pubsub.node_pubsub_mapping:  # redis-py dropped its shard's connection
                raise redis_errors.ConnectionError("the shard subscription was dropped")
            message: dict[str, Any] | None = await self._pubsub.get_sharded_message(timeout=timeout)
            return message
        except (redis_errors.RedisError, OSError, RuntimeError) as error:
            # RuntimeError: a connection redis-py closed under the read (its reconciliation)
            self._failed = True
            await self.close()
            if isinstance(error, redis_errors.ConnectionError):
                raise
            raise redis_errors.ConnectionError(str(error)) from error

    async def close(self) -> None:
        """Unsubscribe (its client stays, for the next `subscribe`)."""
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(redis_errors.RedisError, OSError, RuntimeError):
                await pubsub.aclose()

    async def aclose(self) -> None:
        """Unsubscribe and close its client."""
        await self.close()
        cluster, self._cluster = self._cluster, None
        if cluster is not None:
            await cluster.aclose()


async def _xadd_all(lanes: Lanes, batch: list[Outgoing], maxlen: int) -> list[Any]:
    """Add each command of ``batch`` to its stream in one round trip (`Lanes`): each
    one's entry id or error (every one the same error when the connection itself failed)."""
    adds = [
        ("XADD", stream, "MAXLEN", "~", maxlen, "*", "__data__", message)
        for stream, message, _, _ in batch
    ]
    try:
        results: list[Any] = await lanes.each_reply(adds)
    except Exception as error:  # the connection: every command of the batch failed
        results = [error] * len(batch)
    return results


async def _next_message(pubsub: PubSub, timeout: float) -> dict[str, Any] | None:
    """The subscription's next message (its ``type`` and ``data``), or None after ``timeout``
    s: read off its connection as Redis sent it, without redis-py's machinery around every
    read of a subscription (the health check, the retry wrapper, the metrics, the message's
    dict), which was two thirds of the listener's CPU: a reply a move. Whatever the read
    raises reaches the listener, which subscribes afresh (the class text)."""
    connection = pubsub.connection
    if connection is None:
        raise redis_errors.ConnectionError("the reply channel has no connection")
    response = await connection.read_response(timeout=timeout, push_request=True)
    if not response:  # the timeout: nothing came
        return None
    kind = response[0].decode() if isinstance(response[0], bytes) else str(response[0])
    return {"type": kind, "data": response[-1]}  # a message's: its kind, channel, data


async def _probe(redis: Redis, channel: str, sharded: bool) -> None:
    """Publish `PROBE` to the reply channel (a shard channel's way on a cluster)."""
    command = "SPUBLISH" if sharded else "PUBLISH"
    await redis.execute_command(command, channel, PROBE)  # type: ignore[no-untyped-call]


async def _close_quietly(pubsub: PubSub) -> None:
    """Close a subscription whose connection may be broken already."""
    with contextlib.suppress(Exception):
        await pubsub.aclose()  # type: ignore[no-untyped-call]


def _timeout_message(envelope: bus.CommandEnvelope, timeout: float) -> str:
    return (
        f"no reply to command {envelope.command_id!r} of game {envelope.game_id!r} within "
        f"{timeout:g} s; resend it with the same command id"
    )


def _expire(waiter: asyncio.Future[bytes], envelope: bus.CommandEnvelope, timeout: float) -> None:
    """A command's reply did not come in time: its waiter fails with `CommandTimeout`."""
    if not waiter.done():
        waiter.set_exception(CommandTimeout(_timeout_message(envelope, timeout)))
