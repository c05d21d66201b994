"""Live channels multiplexed: one reader per partition feed for all of a worker's sockets.

A gateway worker may hold thousands of live channels (WebSocket or SSE). Each once held a
Redis connection of its own for its blocking read, so a few hundred addresses could reach
Redis's ``maxclients`` and take every service down. Now the worker reads the partition feeds,
which carry every appended event of every game (``game``, ``version``, ``event``), with one
blocking reader per partition that has a follower (or had one in the last `LINGER_S`), on a
connection of its own: at most as many connections as there are partitions, however many
sockets are open. Each follower gets the
entries of its game in a bounded queue.

No gap and no duplicate: a reader fixes its starting position (the feed's last entry) before a
follower reads the backlog of its game from the game's stream, so every event is either in
that backlog or read by the reader afterwards, and the follower drops versions it has already
passed on. A follower too slow for its queue is marked ``lagging`` instead of blocking the
reader; it then reads what it missed from the game's stream.

No other history: a Redis that came back without its last writes (``everysec``) gives the
versions after what it kept to other events. A reader's read is never sent again to a restarted
server (it fails, and its followers read the stream again), and a follower that reads the
stream again first checks that it still holds the last entry passed on, unchanged
(`HistoryRewound` otherwise: the channel tells its viewer to read the game again).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, cast

from eventstore import KeyLayout
from eventstore.lanes import Lanes
from eventstore.redis_client import cluster_beside, is_cluster, plain_beside
from eventstore.redis_values import stream_reply, text
from gameserver.gateway.live_movers import Item, Moves
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

QUEUE = 1024
"""Entries a follower may have waiting before it is marked lagging (and reads the stream)."""
PAGE = 100
READ_BLOCK_MS = 15_000
"""How long one XREAD blocks; the reader's socket timeout is longer."""
SOCKET_MARGIN_S = 10.0
LINGER_S = 15.0
"""How long a reader whose last follower left goes on reading before it stops: a socket
opened meanwhile on its partition (the players' next game, a reload, the next set-up) takes it
up instead of opening a Redis connection and fixing a position anew (readers opened so took 7%
of the gateway's samples in `py-spy` while `make bench --only setup` set games up)."""
RETRY_S = 0.2
"""Pause before a failed feed reader tries again."""
CANCEL_AGAIN_S = 0.1
"""How long `LiveHub.aclose` waits on a cancelled reader before it cancels it again."""

DECODED = 4096
"""Decoded events a worker keeps for its followers (a game's every seat reads each event)."""

WAKE: Item = (-1, b"")
"""Not an event: wakes a follower to look at its ``lagging`` flag."""


class Follower:
    """One live channel's subscription to its game's entries: a bounded queue of its own (a
    deque and an event), whose next entry can be looked at (`next_is`); its viewer's seat
    (None: a spectator) gets its own moves' events first (`live_movers`)."""

    def __init__(self, game_id: str, hub: LiveHub, viewer: int | None = None) -> None:
        self.game_id = game_id
        self.hub = hub
        self.viewer = viewer
        self.entries: deque[Item] = deque()
        self.arrived = asyncio.Event()
        self.lagging = False

    def offer(self, item: Item) -> None:
        if len(self.entries) >= QUEUE:
            self.lagging = True  # it reads what it missed from the game's stream
            return  # (a full queue wakes the follower anyway)
        self.entries.append(item)
        self.arrived.set()

    def fall_behind(self) -> None:
        """The reader cannot hand entries over (it failed): read the stream instead."""
        self.lagging = True
        self.offer(WAKE)

    async def get(self) -> Item:
        """The next entry handed over, once there is one."""
        while not self.entries:
            self.arrived.clear()
            await self.arrived.wait()
        return self.entries.popleft()

    def next_is(self, version: int) -> bool:
        """Whether the entry handed over next is ``version``, there already (so the channel
        may hold what it has to send until it has that one too)."""
        return bool(self.entries) and self.entries[0][0] == version and not self.lagging


class PartitionReader:
    """Follows one partition feed from a fixed position and hands entries to followers; heals
    when Redis goes away (its followers read what they missed from the game's stream once the
    new position is fixed), and stops once no follower has been left for `LINGER_S`."""

    def __init__(self, hub: LiveHub, partition: int) -> None:
        self.hub = hub
        self.partition = partition
        self.key = hub.layout.feed_key(partition)
        self.followers: dict[str, set[Follower]] = {}
        self.closing = False
        self.started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            while not self.closing:
                try:
                    await self._follow_feed()
                except Exception as error:
                    log.warning("live_feed_failed", partition=self.partition, error=str(error))
                    if not self.started.done():  # Redis is away: the channel says so
                        self.closing = True
                        self.started.set_exception(error)
                        return
                    self._everyone_behind()
                    await asyncio.sleep(RETRY_S)
        finally:
            self.closing = True
            self.hub.moves.drop(self.followers)
            if self.hub.readers.get(self.partition) is self:
                del self.hub.readers[self.partition]

    async def _follow_feed(self) -> None:
        client = await self.hub.open_client()
        try:
            newest = await client.xrevrange(self.key, count=1)
            read = await feed_reads(client, self.key)  # holds the client's one connection
            position: bytes | str = newest[0][0] if newest else b"0-0"
            if self.started.done():
                self._everyone_behind()  # after a failure: what came meanwhile is in the stream
            else:
                self.started.set_result(None)
            alone_since: float | None = None
            loop = asyncio.get_running_loop()
            while not self.closing:  # `LiveHub.aclose` sets it
                now = loop.time()
                if self.followers:
                    alone_since = None
                elif alone_since is None:
                    alone_since = now
                elif now - alone_since >= LINGER_S:
                    self.closing = True  # no await between the test of followers and the flag
                    return
                for entry_id, fields in await read(position):
                    position = entry_id
                    game_id = text(fields[b"game"])
                    if (channels := self.followers.get(game_id)) is not None:
                        item = (int(fields[b"version"]), fields[b"event"])
                        self.hub.moves.hand(game_id, channels, item)
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()

    def _everyone_behind(self) -> None:
        self.hub.moves.drop(self.followers)
        for followers in self.followers.values():
            for follower in followers:
                follower.fall_behind()


class LiveHub:
    """A worker's live readers, one per partition with a follower (see the module's text)."""

    def __init__(self, layout: KeyLayout, redis: Any) -> None:
        self.layout = layout
        self.redis = redis
        self.readers: dict[int, PartitionReader] = {}
        self.moves = Moves()
        """The commands in flight through the worker, and what their games' other channels
        wait for (`live_movers`)."""
        self.catch_ups = 0
        """How often a follower that fell behind read what it missed from the stream."""
        self._decoded: OrderedDict[tuple[str, int], tuple[bytes, Any]] = OrderedDict()
        """Oldest first. An OrderedDict: a plain dict's oldest entry dropped once a new one
        comes (``del d[next(iter(d))]``) costs more the more were dropped before (its first
        slots stay empty until it is resized): 6 us a new event at this size against 0.5 us, 1%
        of the gateway's CPU over the WebSocket at 256 games in `make bench`."""

    def decoded(
        self, game_id: str, version: int, data: bytes, decode: Callable[[bytes], Any]
    ) -> Any:
        """The event ``data`` decoded once for every follower of its game (events are
        immutable values); the bytes are compared, so a stream written again is read anew."""
        key = (game_id, version)
        found = self._decoded.get(key)
        if found is not None and found[0] == data:
            return found[1]
        event = decode(data)
        self._decoded[key] = (data, event)
        if len(self._decoded) > DECODED:
            self._decoded.popitem(last=False)
        return event

    async def open_client(self) -> Any:
        return await live_reader(self.redis)

    async def follow(self, game_id: str, viewer: int | None = None) -> Follower:
        """Subscribe to a game's entries from now on (read its backlog after this returns);
        ``viewer``: the seat whose moves' events it gets first (None: a spectator)."""
        partition = self.layout.partition_of(game_id)
        reader = self.readers.get(partition)
        if reader is None or reader.closing:
            reader = self.readers[partition] = PartitionReader(self, partition)
        follower = Follower(game_id, self, viewer)
        reader.followers.setdefault(game_id, set()).add(follower)
        try:
            await asyncio.shield(reader.started)
        except Exception:
            self.leave(follower)
            raise
        return follower

    def leave(self, follower: Follower) -> None:
        reader = self.readers.get(self.layout.partition_of(follower.game_id))
        if reader is None:
            return
        followers = reader.followers.get(follower.game_id)
        if followers is not None:
            followers.discard(follower)
            if not followers:
                del reader.followers[follower.game_id]
        # A reader without followers stops once `LINGER_S` has passed, at the end of a read
        # (a read blocks `READ_BLOCK_MS` at most).

    def connections(self) -> int:
        """Redis connections the live channels hold now (one per running reader)."""
        return sum(1 for reader in self.readers.values() if not reader.closing)

    async def aclose(self) -> None:
        """Stop every reader, cancelled again while it runs on: on Python 3.11 a cancellation
        that meets the end of an ``asyncio.wait_for`` is lost (redis-py writes a command under
        one), and a reader cancelled just after it started read on for as long as it had
        followers, which held the gateway's shutdown."""
        for reader in list(self.readers.values()):
            reader.closing = True  # its next turn ends it, whatever became of a cancellation
            while not reader.task.done():
                reader.task.cancel()
                await asyncio.wait({reader.task}, timeout=CANCEL_AGAIN_S)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                reader.task.result()


async def live_reader(shared: Any, block_ms: int = READ_BLOCK_MS) -> Any:
    """A Redis client on its own connection for one feed reader: blocking reads must not hold
    the gateway's shared pool, and their socket timeout must outlast the block. A `Redis`, or
    a `RedisCluster` when the gateway runs on a cluster."""
    timeout = block_ms / 1000 + SOCKET_MARGIN_S
    # No retry: a read cut by a restart or a failover must fail, not be sent again to a server
    # that may have come back without the last writes (or to a replica promoted before it had
    # them). The reader then fixes a new position and its followers read the stream again,
    # where a taken-back event shows (`HistoryRewound`).
    if is_cluster(shared):  # a cluster client of its own, on the same nodes
        return await cluster_beside(shared, retries=0, socket_timeout=timeout)
    return plain_beside(shared, retries=0, socket_timeout=timeout, max_connections=1)


FeedEntry = tuple[bytes | str, dict[bytes, bytes]]
"""A feed entry as read: its id and its fields (``game``, ``version``, ``event``)."""
FeedRead = Callable[[bytes | str], Coroutine[Any, Any, list[FeedEntry]]]
"""One blocking read of a feed after a position: its entries."""


async def feed_reads(client: Any, key: str) -> FeedRead:
    """How a reader reads its feed: ``XREAD`` through `Lanes`, on the reader's own client. On
    one Redis that is the client's one connection, kept for the reader's life, without
    redis-py's per-command machinery (the pool, the retry wrapper, the streaming-lag
    recording), which was most of a feed reader's CPU: a fifth of the gateway's over the
    WebSocket at 16 games, where every move's events come in a read of their own. No retry,
    as on the reader's client (`live_reader`): a failed read fails the reader. On a cluster,
    through the cluster client (its routing and redirections)."""
    lanes = Lanes(client)
    head = ("XREAD", "COUNT", PAGE, "BLOCK", READ_BLOCK_MS, "STREAMS", key)

    async def read(position: bytes | str) -> list[FeedEntry]:
        reply = await lanes.one(*head, position)  # new entries: never a deleted one's nil
        return cast("list[FeedEntry]", [e for _, entries in stream_reply(reply) for e in entries])

    return read


class HistoryRewound(Exception):
    """The game's stream no longer holds an event this channel passed on: Redis came back
    without its last writes (a crash under ``appendfsync everysec``, a replica promoted before
    it had them), and the versions that follow may be another history's. The viewer must read
    the game again: what it holds up to ``passed`` may not stand."""

    def __init__(self, game_id: str, passed: int) -> None:
        super().__init__(
            f"Events this channel sent (up to version {passed}) were taken back: the store "
            "came back without its last writes after a crash. Read the game again and follow "
            "it from its version now."
        )
        self.game_id = game_id
        self.passed = passed


async def entries_after(
    follower: Follower,
    read_backlog: Callable[[int], Awaitable[list[Item]]],
    after: int,
    caught_up: Callable[[], None] = lambda: None,
    passed: bytes = b"",
) -> AsyncIterator[Item]:
    """Every entry of the follower's game after version ``after``, in order, each once: the
    backlog from the game's stream, then what the reader hands over (read from the stream
    again whenever the follower fell behind or a version is missing). ``caught_up`` is called
    once the first backlog is read and handed on.

    Each time the stream is read again, it must still hold the last entry passed on, as it
    was (`HistoryRewound` otherwise): a Redis that came back without its last writes may be
    given other events under the same versions, which must never reach a viewer as the
    continuation of those it has; ``passed`` (a resume that named it) is checked alike."""
    last = after
    backlog = waiting = True
    while True:
        if backlog or follower.lagging:
            if follower.lagging:
                follower.hub.catch_ups += 1
            follower.lagging = False
            backlog = False
            start = last - 1 if passed else last  # the last entry passed on, to check it
            while True:
                page = await read_backlog(start)
                if passed and start == last - 1:
                    _check_kept(follower.game_id, page, last, passed)
                for version, data in page:
                    if version > last:
                        last, passed = version, data
                        yield version, data
                if len(page) < PAGE:
                    break
                start = last
            continue
        if waiting:
            waiting = False
            caught_up()
        version, data = await follower.get()
        if version == last and passed and data != passed:
            raise HistoryRewound(follower.game_id, last)
        if version <= last:  # WAKE too: the loop looks at the lagging flag again
            continue
        if version > last + 1:  # something was not handed over: read it from the stream
            backlog = True
            continue
        last, passed = version, data
        yield version, data


def _check_kept(game_id: str, page: list[Item], last: int, passed: bytes) -> None:
    """`HistoryRewound` unless ``page`` (read from version ``last`` on) starts with the entry
    passed on last, unchanged."""
    if not page or page[0][0] != last or page[0][1] != passed:
        raise HistoryRewound(game_id, last)
