# long: the whole EventStore contract on Redis in one class, and the parsers of its replies
"""The Redis Streams event store.

One stream per game holds the game's events with explicit entry ids ``0-<version>``, so the
stream id *is* the version and a reader never needs a separate index. Appends go through one
Lua script (see `eventstore._lua`) that checks idempotency, the expected version and the
expected last hash and writes the batch, the partition feed and the games set atomically. The
durability mode (`eventstore.durability`) decides what must happen before an append counts
as done. See docs/event-store.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from eventstore import archive
from eventstore._lua import APPEND_LUA, TAG_APPENDED, TAG_CONFLICT, TAG_DUPLICATE
from eventstore.durability import (
    DEFAULT_DURABILITY,
    DEFAULT_REPLICAS,
    DEFAULT_WAIT_TIMEOUT_MS,
    Durability,
    DurabilityStatus,
    check_durability,
    parse_durability,
    server_version,
    supports_waitaof,
)
from eventstore.keys import DEFAULT_PARTITIONS, DEFAULT_PREFIX, KeyLayout
from eventstore.lanes import Lanes
from eventstore.redis_client import is_cluster, pipeline_of
from eventstore.redis_values import RawEntry, group_read, stream_reply
from eventstore.types import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    CorruptStreamError,
    Duplicate,
    FeedEntry,
    NotDurableError,
    Settlement,
    StoredEvent,
    StoreError,
    StoreUnavailableError,
    entries_by_partition,
)
from eventstore.waiting_reads import WaitingReads

DEFAULT_OUTCOME_TTL_SECONDS: Final = 7 * 24 * 3600
DEFAULT_PAGE_SIZE: Final = 1000
MAX_VERSION: Final = 2**63 - 1
"""The largest version there can be: a version is the sequence part of a stream entry id (a
64-bit number); reading after it gives nothing."""

_EVENT: Final = b"event"
_META: Final = b"meta"
_GAME: Final = b"game"
_VERSION: Final = b"version"
_HASH: Final = b"hash"


# long: the whole EventStore contract on Redis (appends, reads, feeds, groups, outcomes) in one
class RedisEventStore:
    """Event store on Redis Streams, safe for concurrent writers and Redis Cluster ready."""

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        partitions: int = DEFAULT_PARTITIONS,
        outcome_ttl_seconds: int | None = DEFAULT_OUTCOME_TTL_SECONDS,
        page_size: int = DEFAULT_PAGE_SIZE,
        durability: Durability | str = DEFAULT_DURABILITY,
        replicas: int = DEFAULT_REPLICAS,
        wait_timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS,
    ) -> None:
        """Wrap a client; ``partitions`` and ``prefix`` are part of the stored layout.

        The client must return bytes (``decode_responses=False``): events are opaque binary
        data and decoding them as text would corrupt them. ``durability`` is the mode of
        `eventstore.durability`: with ``replica`` every write waits for ``replicas``
        replicas (at most ``wait_timeout_ms``) before it counts as done.
        """
        if redis.get_encoder().decode_responses:  # type: ignore[no-untyped-call]  # or a cluster
            raise ValueError("the event store needs a Redis client with decode_responses=False")
        if page_size < 1:
            raise ValueError(f"page size must be at least 1, got {page_size}")
        if outcome_ttl_seconds is not None and outcome_ttl_seconds < 0:
            raise ValueError(f"outcome TTL must not be negative, got {outcome_ttl_seconds}")
        self._redis = redis
        self._lanes = Lanes(redis)
        self.layout = KeyLayout(prefix=prefix, partitions=partitions)
        self._outcome_ttl = outcome_ttl_seconds or 0
        self._page_size = page_size
        self._append_script = redis.register_script(APPEND_LUA)
        self.durability = parse_durability(durability)
        if replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {replicas}")
        self._replicas = replicas
        self._wait_timeout_ms = wait_timeout_ms
        self._waitaof: bool | None = None  # known once the server's version was read
        self._cluster = is_cluster(redis)  # waits go to each master written to
        self._waiting = WaitingReads(redis)  # a cluster's blocking reads of several feeds

    # -- layout ------------------------------------------------------------------------------

    def partition_of(self, game_id: str) -> int:
        """The partition of a game, stable across processes and runs."""
        return self.layout.partition_of(game_id)

    def partitions(self) -> range:
        """All partition numbers, for projectors that consume every feed."""
        return range(self.layout.partitions)

    def feed_key(self, partition: int) -> str:
        """The key of a partition feed stream."""
        return self.layout.feed_key(partition)

    # -- writing -----------------------------------------------------------------------------

    async def append(
        self,
        game_id: str,
        *,
        command_id: str,
        expected_version: int,
        events: Sequence[bytes],
        outcome: bytes,
        batch_meta: bytes | None = None,
    ) -> AppendResult:
        """Append the events of one command if the game is still at ``expected_version``.

        Returns `Appended` with the new versions, `Conflict` when another command got there
        first (nothing written), or `Duplicate` with the stored outcome when ``command_id`` was
        handled before (nothing written, whatever ``expected_version`` says). ``outcome`` is
        what a retry of this command will get back in that `Duplicate`.
        """
        request = AppendRequest(game_id, command_id, expected_version, events, outcome, batch_meta)
        (result,) = await self.append_many([request])
        return result

    async def append_many(self, requests: Sequence[AppendRequest]) -> list[AppendResult]:
        """`append` for several commands in one round trip (a pipeline, not a transaction).

        Each request is its own atomic, conditional and idempotent append, exactly as if
        `append` had been called for each in order; they merely share the network round trip.
        Two requests for the same game are allowed, but the second is only appended if the
        first left the game at the second's expected version.

        Under the ``replica`` durability mode the results are returned only once the writes
        (and, for a `Duplicate`, the earlier write it answers with) are on enough replicas;
        `NotDurableError` otherwise.
        """
        calls = [self._script_call(request) for request in requests]
        if not calls:
            return []
        with _translate_errors():
            replies = await self._evalsha_all(calls)
            missing = [i for i, reply in enumerate(replies) if _is_noscript(reply)]
            if missing:  # the server lost its script cache (restart, SCRIPT FLUSH): load, redo
                await self._redis.script_load(APPEND_LUA)
                again = await self._evalsha_all([calls[i] for i in missing], wait=False)
                for i, reply in zip(missing, again, strict=True):
                    replies[i] = reply
                await self._wait_replicas(touch=True, keys=[keys[0] for keys, _ in calls])
        for reply in replies:
            if isinstance(reply, Exception):
                raise _store_error(reply)
        results = [
            _parse_append_reply(reply, request.expected_version)
            for reply, request in zip(replies, requests, strict=True)
        ]
        if self.durability is Durability.REPLICA and any(
            isinstance(result, Duplicate) for result in results
        ):
            # A duplicate answers with an outcome another connection wrote, maybe an instant
            # ago: WAIT only covers this connection's writes, so write a marker and wait again.
            with _translate_errors():
                await self._wait_replicas(touch=True, keys=[keys[0] for keys, _ in calls])
        return results

    def _script_call(self, request: AppendRequest) -> tuple[list[str], list[bytes | str | int]]:
        """The keys and arguments of the append script for one request (checked)."""
        _check_events(request.events)
        if request.expected_version < 0:
            raise ValueError(
                f"expected version must not be negative, got {request.expected_version}"
            )
        if request.hashes is not None and len(request.hashes) != len(request.events):
            raise ValueError(
                f"{len(request.hashes)} hashes for {len(request.events)} events: one per event"
            )
        game_id = request.game_id
        partition = self.layout.partition_of(game_id)
        keys = [
            self.layout.game_key(game_id),
            self.layout.command_key(game_id, request.command_id),
            self.layout.feed_key(partition),
            self.layout.games_key(partition),
        ]
        args: list[bytes | str | int] = [
            request.expected_version,
            request.outcome,
            self._outcome_ttl,
            game_id,
            0 if request.batch_meta is None else 1,
            b"" if request.batch_meta is None else request.batch_meta,
            0 if request.prev_hash is None else 1,
            request.prev_hash or "",
            0 if request.hashes is None else 1,
            *self._settling(request.settlement, keys),
        ]
        if request.hashes is None:
            args += request.events
        else:
            for event, event_hash in zip(request.events, request.hashes, strict=True):
                args += [event, event_hash]
        return keys, args

    @property
    def settles_in_append(self) -> bool:
        """Whether appends may carry a `Settlement`: on one Redis, whose durability needs no
        wait after the write (a cluster keeps the command streams and channels in other
        slots than a game's; the ``replica`` mode answers only after its wait)."""
        return not self._cluster and self.durability is not Durability.REPLICA

    def _settling(self, settlement: Settlement | None, keys: list[str]) -> list[bytes | str | int]:
        """The script's settlement arguments (its stream added to ``keys``); blanks for none."""
        if settlement is None:
            return [0, "", "", "", ""]
        if not self.settles_in_append:
            raise ValueError("this store does not settle in its appends (settles_in_append)")
        keys.append(settlement.stream)
        return [1, settlement.channel, settlement.message, settlement.group, settlement.entry_id]

    async def _evalsha_all(
        self, calls: Sequence[tuple[list[str], list[bytes | str | int]]], *, wait: bool = True
    ) -> list[Any]:
        """Run the append script once per call in one round trip (one pipeline, or the call
        alone, on a kept connection: `Lanes`); errors come back as values.

        Under the ``replica`` mode a pipeline ends with the wait for the replicas (on the
        same connection, so it covers these writes), checked here."""
        sha = self._append_script.sha
        # EVALSHA by name: a cluster pipeline refuses evalsha(), routes this by its keys
        evals = [("EVALSHA", sha, len(keys), *keys, *args) for keys, args in calls]
        waiting = wait and self.durability is Durability.REPLICA
        for attempt in (1, 2):
            if not waiting:  # one append alone goes without a pipeline (`each_reply`)
                replies = await self._lanes.each_reply(evals)
                waits = 0
            else:
                pipe = pipeline_of(self._redis, evals)
                waits = await self._queue_wait(pipe, [keys[0] for keys, _ in calls])
                replies = list(await pipe.execute(raise_on_error=False))
            if (
                attempt == 1
                and self._cluster
                and any(isinstance(r, redis_errors.ConnectionError) for r in replies)
            ):
                # redis-py's cluster client may drop a node connection under a pipeline that
                # shares it with concurrent ones ("Connection closed by server"): run the
                # batch again once. Appends are idempotent: a done one answers Duplicate.
                continue
            break
        for _ in range(waits):
            self._check_wait(replies.pop())
        return replies

    # -- durability --------------------------------------------------------------------------

    async def check_durability(self) -> DurabilityStatus:
        """What the server does against what the store's durability mode needs (start-up)."""
        with _translate_errors():
            return await check_durability(self._redis, self.durability, self._replicas)

    async def _queue_wait(self, pipe: Any, keys: Sequence[str] = ()) -> int:
        """Add the wait for the replicas to ``pipe``: WAITAOF on Redis 7.2+, WAIT before; how
        many waits were queued. On Redis Cluster one per master that ``keys`` live on, sent
        to that master on the pipeline's own connection to it (so it covers these writes)."""
        if self._waitaof is None:
            self._waitaof = supports_waitaof(await server_version(self._redis))
        wait: tuple[str | int, ...] = (
            ("WAITAOF", 0, self._replicas, self._wait_timeout_ms)
            if self._waitaof
            else ("WAIT", self._replicas, self._wait_timeout_ms)
        )
        if not self._cluster:
            pipe.execute_command(*wait)
            return 1
        await self._redis.initialize()  # the slot map (a no-op once known)
        cluster: Any = self._redis  # a RedisCluster here (self._cluster)
        nodes = {node.name: node for node in map(cluster.get_node_from_key, keys)}
        for node in nodes.values():
            pipe.execute_command(*wait, target_nodes=node)
        return len(nodes)

    def _check_wait(self, reply: Any) -> None:
        """Raise `NotDurableError` unless enough replicas acknowledged."""
        if isinstance(reply, Exception):
            raise _store_error(reply)
        acknowledged = int(reply[1]) if isinstance(reply, list) else int(reply)
        if acknowledged < self._replicas:
            raise NotDurableError(
                f"{acknowledged} of {self._replicas} replica(s) acknowledged the write within "
                f"{self._wait_timeout_ms} ms; not acknowledged, retry with the same command id"
            )

    async def _wait_replicas(self, *, touch: bool, keys: Sequence[str] = ()) -> None:
        """Under the ``replica`` mode: wait until the replicas have everything this connection
        wrote, after writing a marker (``touch``) so the wait also covers what other
        connections wrote before now (what a duplicate or a read answer relies on)."""
        if self.durability is not Durability.REPLICA:
            return
        pipe = self._redis.pipeline(transaction=False)
        markers = [f"{self.layout.prefix}:durable-marker"]
        if self._cluster:  # a marker in the hash slot of each key: its master's wait covers it
            tags = {key[key.index("{") : key.index("}") + 1] for key in keys if "{" in key}
            markers = [f"{self.layout.prefix}:{tag}:durable-marker" for tag in sorted(tags)]
        if touch:
            for marker in markers:
                pipe.set(marker, b"1")
        waits = await self._queue_wait(pipe, markers)
        replies = list(await pipe.execute(raise_on_error=False))
        for reply in replies[len(replies) - waits :]:
            self._check_wait(reply)

    async def record_outcome(
        self, game_id: str, command_id: str, outcome: bytes
    ) -> Duplicate | None:
        """Record the outcome of a command that appended nothing (e.g. a rejected move).

        First writer wins: returns ``None`` when this call recorded ``outcome``, or `Duplicate`
        with the outcome recorded earlier (by this method or by an `append`), which is what the
        caller should answer so a retried command always gets the same reply.
        """
        key = self.layout.command_key(game_id, command_id)
        with _translate_errors():
            previous = await self._redis.set(
                key, outcome, nx=True, get=True, ex=self._outcome_ttl or None
            )
            await self._wait_replicas(touch=previous is not None, keys=[key])
        if previous is None:
            return None
        if not isinstance(previous, bytes | str):
            raise StoreError(f"unexpected reply to SET NX GET: {previous!r}")
        return Duplicate(_as_bytes(previous))

    async def get_outcome(self, game_id: str, command_id: str) -> bytes | None:
        """The stored outcome of a command, or ``None`` if it is unknown (or expired)."""
        with _translate_errors():
            value = await self._redis.get(self.layout.command_key(game_id, command_id))
        return None if value is None else _as_bytes(value)

    # -- reading -----------------------------------------------------------------------------

    async def read(
        self, game_id: str, after_version: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The events after ``after_version`` in order, at most ``limit`` of them."""
        return [event async for event in self.iter_events(game_id, after_version, limit)]

    async def read_many(self, requests: Sequence[tuple[str, int]]) -> list[list[StoredEvent]]:
        """`read` for several ``(game_id, after_version)`` pairs in one round trip.

        Meant for catching up cached states, which are at most one game long: each game's
        events after its version are read whole (no paging).
        """
        if not requests:
            return []
        for _, after_version in requests:
            if after_version < 0:
                raise ValueError(f"after_version must not be negative, got {after_version}")
        # Nothing can come after the last possible version (nor is there an entry id for it).
        wanted = [i for i, (_, after) in enumerate(requests) if after < MAX_VERSION]
        pipe = self._redis.pipeline(transaction=False)
        for i in wanted:
            game_id, after_version = requests[i]
            pipe.xrange(self.layout.game_key(game_id), min=f"0-{after_version + 1}")
        with _translate_errors():
            pages = await pipe.execute() if wanted else []
        out: list[list[StoredEvent]] = [[] for _ in requests]
        for i, page in zip(wanted, pages, strict=True):
            out[i] = [_parse_game_entry(raw) for raw in page or []]
        for i in wanted:  # a finished game packed by the retention service (archive.py)
            if not out[i] and requests[i][1] == 0:
                out[i] = await self._packed(requests[i][0]) or []
        return out

    async def _packed(self, game_id: str) -> list[StoredEvent] | None:
        """The events of a game whose stream was packed (`eventstore.archive`), if it was."""
        with _translate_errors():
            blob = await self._redis.get(archive.packed_key(self.layout, game_id))
        return None if blob is None else archive.unpack(cast(bytes, blob))  # a bytes client

    async def iter_events(
        self, game_id: str, after_version: int = 0, limit: int | None = None
    ) -> AsyncIterator[StoredEvent]:
        """Like `read`, but yields page by page so a long game never sits in memory whole."""
        if after_version < 0:
            raise ValueError(f"after_version must not be negative, got {after_version}")
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        if after_version >= MAX_VERSION:
            return  # nothing can come after the last possible version
        key = self.layout.game_key(game_id)
        remaining = limit
        next_version = after_version + 1
        while remaining is None or remaining > 0:
            count = self._page_size if remaining is None else min(self._page_size, remaining)
            with _translate_errors():
                page = await self._redis.xrange(key, min=f"0-{next_version}", count=count) or []
            if not page and next_version == 1:  # no stream: a packed finished game?
                for event in archive.after(await self._packed(game_id) or [], 0, remaining):
                    yield event
                return
            for raw in page:
                event = _parse_game_entry(raw)
                yield event
                next_version = event.version + 1
            if remaining is not None:
                remaining -= len(page)
            if len(page) < count:
                return

    async def version(self, game_id: str) -> int:
        """The game's current version: the number of its events, 0 for a new game."""
        with _translate_errors():
            last = await self._redis.xrevrange(self.layout.game_key(game_id), count=1)
        if not last:
            return len(await self._packed(game_id) or [])
        return _parse_version(last[0][0])

    async def last(self, game_id: str) -> StoredEvent | None:
        """The game's last event (None for a game without events): one ``XREVRANGE`` of one
        entry (a packed game's events unpacked)."""
        with _translate_errors():
            last = await self._redis.xrevrange(self.layout.game_key(game_id), count=1)
        if last:
            return _parse_game_entry(last[0])
        packed = await self._packed(game_id)
        return packed[-1] if packed else None

    async def exists(self, game_id: str) -> bool:
        """Whether the game has at least one event."""
        with _translate_errors():
            keys = (self.layout.game_key(game_id), archive.packed_key(self.layout, game_id))
            return bool(await self._redis.exists(*keys))

    async def list_games(self, partition: int | None = None) -> list[str]:
        """The ids of all games (of one partition, or of all), sorted."""
        chosen = self.partitions() if partition is None else [partition]
        games: list[str] = []
        with _translate_errors():
            for p in chosen:
                members = await self._redis.smembers(self.layout.games_key(p))
                games.extend(_as_str(m) for m in members)
        return sorted(games)

    # -- partition feeds ---------------------------------------------------------------------

    async def ensure_group(self, partition: int, group: str, start_id: str = "0") -> bool:
        """Create a consumer group on a feed (and the feed itself); True if it was created.

        ``start_id="0"`` makes a new projector see the whole history, which is what a
        projection rebuilt from scratch needs. An existing group is left untouched.
        """
        try:
            with _translate_errors():
                await self._redis.xgroup_create(
                    self.feed_key(partition), group, id=start_id, mkstream=True
                )
        except StoreError as error:
            if "BUSYGROUP" in str(error):
                return False
            raise
        return True

    async def read_group(
        self,
        group: str,
        consumer: str,
        partitions: Iterable[int],
        count: int = 100,
        block_ms: int | None = None,
    ) -> list[FeedEntry]:
        """Read new feed entries for ``consumer`` of ``group`` from several partitions.

        The group must exist on every partition (`ensure_group`). ``count`` bounds the entries
        per partition; ``block_ms`` waits for new entries (``None``: do not wait). On Redis
        Cluster, where every partition is its own hash slot, several partitions are read with
        one XREADGROUP each (`_read_each`), those that block kept in flight across calls.
        """
        by_key = {self.feed_key(p): p for p in partitions}
        if not by_key:
            return []
        if self._cluster and len(by_key) > 1:
            return await self._read_each(group, consumer, by_key, count, block_ms)
        with _translate_errors():
            reply = await self._lanes.one(*group_read(group, consumer, by_key, count, block_ms))
        return [
            _parse_feed_entry(by_key[_as_str(key)], raw)
            for key, entries in stream_reply(reply)
            for raw in entries
            if raw[1] is not None
        ]

    async def _read_each(
        self, group: str, consumer: str, by_key: dict[str, int], count: int, block_ms: int | None
    ) -> list[FeedEntry]:
        """`read_group` on Redis Cluster: without ``block_ms`` every feed read once, in one
        pipeline (a round trip per master); with it, one blocking read per feed kept in
        flight across calls (`WaitingReads`), answered by whichever feed has entries first."""
        with _translate_errors():
            if block_ms is None:
                pipe = self._redis.pipeline(transaction=False)
                for key in by_key:
                    pipe.xreadgroup(group, consumer, {key: ">"}, count=count)
                replies = await pipe.execute()
            else:
                replies = await self._waiting.read(group, consumer, by_key, count, block_ms)
        return [
            _parse_feed_entry(by_key[_as_str(key)], raw)
            for reply in replies
            for key, entries in stream_reply(reply)
            for raw in entries
            if raw[1] is not None
        ]

    async def close_reads(self) -> None:
        """Cancel the blocking reads a reader of several feeds left in flight on a cluster
        (what they took stays pending in its group, for `autoclaim`)."""
        await self._waiting.close()

    async def ack(self, partition: int, group: str, entry_ids: Iterable[str]) -> int:
        """Acknowledge processed feed entries; returns how many were pending."""
        ids = list(entry_ids)
        if not ids:
            return 0
        with _translate_errors():
            return int(await self._redis.xack(self.feed_key(partition), group, *ids))

    async def ack_entries(self, group: str, entries: Iterable[FeedEntry]) -> int:
        """Acknowledge entries of any partitions in one round trip; returns how many were
        pending."""
        by_partition = entries_by_partition(entries)
        if not by_partition:
            return 0
        with _translate_errors():
            pipe = self._redis.pipeline(transaction=False)
            for partition, ids in by_partition.items():
                pipe.xack(self.feed_key(partition), group, *ids)
            return sum(int(n) for n in await pipe.execute())

    async def autoclaim(
        self, partition: int, group: str, consumer: str, min_idle_ms: int, count: int = 100
    ) -> list[FeedEntry]:
        """Take over up to ``count`` entries pending longer than ``min_idle_ms`` elsewhere.

        This is how a projector recovers the work of a crashed consumer. Entries deleted from
        the feed meanwhile cannot be processed: Redis 7 drops them from the pending list itself;
        on older servers they come back without fields and are acknowledged here so they do not
        stay pending forever.
        """
        key = self.feed_key(partition)
        claimed: list[FeedEntry] = []
        cursor: bytes | str = "0-0"
        with _translate_errors():
            while len(claimed) < count:
                reply = await self._redis.xautoclaim(
                    key, group, consumer, min_idle_ms, start_id=cursor, count=count - len(claimed)
                )
                cursor, entries = reply[0], reply[1]
                deleted = [raw[0] for raw in entries if raw[1] is None]
                if deleted:
                    await self._redis.xack(key, group, *deleted)
                claimed.extend(_parse_feed_entry(partition, raw) for raw in entries if raw[1])
                if _as_str(cursor) == "0-0":
                    break
        return claimed


# -- helpers ---------------------------------------------------------------------------------


@contextmanager
def _translate_errors() -> Iterator[None]:
    """Turn redis-py errors into store errors so callers depend on this package only."""
    try:
        yield
    except (redis_errors.ConnectionError, redis_errors.TimeoutError) as error:
        raise StoreUnavailableError(str(error)) from error
    except redis_errors.RedisError as error:
        if "eventstore:" in str(error):
            raise CorruptStreamError(str(error)) from error
        raise StoreError(str(error)) from error


def _is_noscript(reply: Any) -> bool:
    return isinstance(reply, redis_errors.NoScriptError) or (
        isinstance(reply, redis_errors.ResponseError) and str(reply).startswith("NOSCRIPT")
    )


def _store_error(error: Exception) -> StoreError:
    """The store error for a Redis error reply returned as a pipeline value."""
    if "eventstore:" in str(error):
        return CorruptStreamError(str(error))
    return StoreError(str(error))


def _check_events(events: Sequence[bytes]) -> None:
    """An append needs at least one event, and events must already be encoded bytes.

    redis-py would silently encode a ``str`` or an ``int``; refusing them catches a caller that
    forgot to encode with msgspec before the wrong bytes are stored forever.
    """
    if isinstance(events, bytes | str) or not events:
        raise ValueError("append needs a non-empty sequence of events (use record_outcome)")
    for event in events:
        if not isinstance(event, bytes):
            raise TypeError(f"events must be bytes, got {type(event).__name__}")


def _parse_append_reply(reply: Any, expected_version: int) -> AppendResult:
    """Map the script's ``{tag, ...}`` reply to a result value."""
    if not isinstance(reply, list) or not reply:
        raise StoreError(f"unexpected reply from the append script: {reply!r}")
    tag = _as_bytes(reply[0])
    if tag == TAG_APPENDED:
        return Appended(first_version=int(reply[1]), last_version=int(reply[2]))
    if tag == TAG_CONFLICT:
        actual_hash = _as_str(reply[2]) if len(reply) > 2 else None
        return Conflict(expected=expected_version, actual=int(reply[1]), actual_hash=actual_hash)
    if tag == TAG_DUPLICATE:
        return Duplicate(outcome=_as_bytes(reply[1]))
    raise StoreError(f"unexpected reply from the append script: {reply!r}")


def _parse_version(entry_id: bytes | str | None) -> int:
    """The version encoded in a game stream entry id ``0-<version>``."""
    ms, _, seq = _as_str(entry_id or b"").partition("-")
    if ms != "0" or not seq.isdigit():
        raise CorruptStreamError(f"unexpected game stream entry id {entry_id!r}")
    return int(seq)


def _parse_game_entry(raw: RawEntry) -> StoredEvent:
    """A game stream entry as a `StoredEvent`."""
    entry_id, fields = raw
    if not fields or _EVENT not in fields:
        raise CorruptStreamError(f"game stream entry {entry_id!r} has no event field")
    meta = fields.get(_META)
    event_hash = fields.get(_HASH)
    return StoredEvent(
        version=_parse_version(entry_id),
        data=_as_bytes(fields[_EVENT]),
        meta=None if meta is None else _as_bytes(meta),
        hash=None if event_hash is None else _as_str(event_hash),
    )


def _parse_feed_entry(partition: int, raw: RawEntry) -> FeedEntry:
    """A feed entry as a `FeedEntry`."""
    entry_id, fields = raw
    try:
        if fields is None or entry_id is None:
            raise KeyError(_EVENT)
        event_hash = fields.get(_HASH)
        return FeedEntry(
            partition=partition,
            entry_id=_as_str(entry_id),
            game_id=_as_str(fields[_GAME]),
            version=int(fields[_VERSION]),
            data=_as_bytes(fields[_EVENT]),
            hash=None if event_hash is None else _as_str(event_hash),
        )
    except (KeyError, ValueError) as error:
        raise CorruptStreamError(f"malformed feed entry {entry_id!r}: {fields!r}") from error


def _as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


def _as_str(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
