"""Redis clients for a URL: a plain `Redis`, or a `RedisCluster` when the URL names a cluster.

``redis+cluster://host:port/`` (or ``rediss+cluster://`` for TLS) names a Redis Cluster by any
one of its nodes; the client discovers the others and routes every command to the master of its
key's hash slot. Every key of a game carries the game's partition as a hash tag (see
`eventstore.keys`), so everything one command touches lives on one shard.

```python
redis = redis_client(settings.store.redis_url)      # Redis or RedisCluster, bytes replies
pool = blocking_pool(settings.store.redis_url, max_connections=200, timeout=10.0)
probe = sync_client(settings.store.redis_url, socket_timeout=3)   # blocking, for a probe or a tool
```

Every client made here heals (`healing_options`): a connection the server closed (Redis
restarted, a timeout, ``CLIENT KILL``) is replaced on its next use instead of failing that use
with "Connection closed by server.". redis-py 8 turns on maintenance notifications (``"auto"``)
for RESP3 connections, and a pool with them on skips its check of a connection taken from the
pool (``ensure_connection``: a socket at EOF is reconnected), and connections made by a pool
built from a URL have no retries: each stale connection of the pool then failed one command,
long after Redis was back. Here maintenance notifications are off (they are a Redis
Enterprise feature), a command whose connection fails (``ConnectionError``: closed, refused,
reset) is retried on a fresh connection for about a second, and a connection idle for
`HEALTH_CHECK_INTERVAL_S` is pinged before it is used (a server that vanished without closing
the connection). A ``TimeoutError`` is not retried: the command may have run (a rate limit
would count twice), and a frozen server must give an error, not several timeouts in a row.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from redis._parsers.commands import AsyncCommandsParser
from redis.asyncio import BlockingConnectionPool, Connection, ConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.connection import HiredisRespSerializer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.maint_notifications import MaintNotificationsConfig

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
RETRIES = 5
"""Retries of a command whose connection failed: 0.05, 0.1, 0.2, 0.4, 0.4 s apart, so a command
sent while Redis restarts goes through if Redis answers within about a second."""
CLUSTER_NODE_CONNECTIONS = 4096
"""A cluster client's cap on connections to each node. redis-py's cluster client has no
blocking pool: a command that finds every connection to its node in use fails at once
(``MaxConnectionsError``, a ``ConnectionError``), and the retry that follows closes every
connection of the client, those in use by other commands too, which then fail as well
("Connection closed by server.", a closed transport, a missing writer). With redis-py's default
of 100, and the 200 the gateway asked for, setting up 128 games on four gateway workers ended
in ``503 store_unavailable`` and then 500s. Connections are opened only as commands need them,
so the cap is set where the gateway's front door stops admitting requests first (4096
connections per worker): each node's ``maxclients`` (10000 by default) must cover the peak of
every client together."""
HEALTH_CHECK_INTERVAL_S = 15.0
"""A connection idle this long is pinged (and replaced when dead) before its next command."""


def healing_options(*, cluster: bool = False, retries: int = RETRIES) -> dict[str, Any]:
    """Connection options that make a client reconnect after the server closed a connection
    (see the module docstring); fresh objects on every call (a `Retry` is per client).
    ``retries=0`` for a client whose writes must not be sent again to a restarted server: the
    rules service's replies (a reply sent again after a restart could acknowledge a write that
    the restarted server lost; lost, it is asked for again)."""
    options: dict[str, Any] = {
        "retry": Retry(
            ExponentialBackoff(cap=0.4, base=0.05),
            retries,
            supported_errors=(RedisConnectionError,),
        ),
        "health_check_interval": HEALTH_CHECK_INTERVAL_S,
    }
    if not cluster:  # a cluster's nodes keep their own connection lists, with no such check
        options["maint_notifications_config"] = MaintNotificationsConfig(enabled=False)
    return options


_TORN = (RuntimeError, AttributeError)
"""What redis-py's asyncio connection raises when its transport was closed under it by a
concurrent disconnect of the same connection (``'NoneType' object has no attribute ...``,
"unable to perform operation on ... closed")."""


class PackedConnection(Connection):
    """redis-py's asyncio connection with its commands packed by hiredis (C), with redis-py's
    own `HiredisRespSerializer` (its synchronous connection's packer), instead of redis-py's
    Python packer: the rules service spent a tenth of its CPU at 256 games packing the
    arguments of its append scripts. The bytes sent are the same
    (`tests/unit/test_packed_connection.py`)."""

    def pack_command(self, *args: Any) -> list[bytes]:
        return _HIREDIS.pack(*args)  # type: ignore[no-any-return]

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        """redis-py's send, without a task for the write where the write cannot wait.

        With a socket timeout redis-py writes under ``asyncio.wait_for``, which on Python 3.11
        makes a task per command (about a sixth of a command's CPU in the client, every
        command of every service). A write waits only when the socket's buffer passes its high
        water mark; a command no larger than that, onto an empty buffer, never does, and goes
        with no timer (the socket timeout is set aside for that write alone). The connection,
        the health check and every other write keep their timeouts."""
        timeout = self.socket_timeout
        if not timeout or not self.is_connected or isinstance(command, str):
            await super().send_packed_command(command, check_health)
            return
        if check_health:
            await self.check_health()  # type: ignore[no-untyped-call]  # a PING, timed
        writer = self._writer  # after the check, which may have connected again
        if writer is None:
            await super().send_packed_command(command, check_health=False)
            return
        chunks = [command] if isinstance(command, bytes) else list(command)
        transport = writer.transport
        if (
            transport.is_closing()
            or transport.get_write_buffer_size()
            or sum(map(len, chunks)) > transport.get_write_buffer_limits()[1]
        ):
            await super().send_packed_command(chunks, check_health=False)
            return
        self.socket_timeout = None  # this write cannot wait: redis-py writes without wait_for
        try:
            await super().send_packed_command(chunks, check_health=False)
        finally:
            self.socket_timeout = timeout


_HIREDIS = HiredisRespSerializer()


class SturdyConnection(PackedConnection):
    """A cluster node's connection whose I/O fails only with redis-py's ``ConnectionError``.

    redis-py's async cluster client, when a command meets a connection error on a node, marks
    every connection of that node for reconnection and disconnects the free ones: a connection
    that another command is opening at that moment has its transport closed under its
    handshake (``HELLO``, ``CLIENT SETINFO``), and the error that surfaces is a
    ``RuntimeError`` or ``AttributeError``, which the cluster client does not retry (it retries
    ``ConnectionError`` and ``TimeoutError``, by exact type): setting up 128 games on four
    gateway workers over a cluster ended in 500s. Here such an error disconnects the
    connection and becomes a plain ``ConnectionError``, which the client retries on a fresh
    connection, as it does a read that finds the connection closed."""

    async def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().connect_check_health(*args, **kwargs)
        except _TORN as error:
            raise await self._torn(error) from error

    async def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().send_packed_command(*args, **kwargs)
        except _TORN as error:
            raise await self._torn(error) from error

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except _TORN as error:
            raise await self._torn(error) from error

    async def _torn(self, error: BaseException) -> RedisConnectionError:
        await self.disconnect(nowait=True)
        return RedisConnectionError(f"connection to {self.host}:{self.port} torn: {error!r}")


_IN_CLIENT: ContextVar[bool] = ContextVar("renature_in_cluster_client", default=False)
"""Set while a `SturdyCluster`'s own command or pipeline runs: a close it asks for is its
retry's, to be done gently (`SturdyCluster.aclose`)."""


class SturdyNode(ClusterNode):
    """A cluster node whose sweep of its free connections closes none that a command has
    taken meanwhile.

    After a connection error redis-py's cluster client disconnects the node's free
    connections: it lists them, then closes them one task each, a loop iteration later. A
    command that took one of them from the free list in between had it closed under its
    write or its read ("Connection lost", "Connection closed by server."): that error set off
    the same sweep again, and with four gateway workers on a cluster one lost connection
    became a run of 503s. Here the sweep takes the connections off the free list before its
    first wait (a command finds a fresh connection instead) and gives them back disconnected,
    to reconnect on their next use. The nodes of a `SturdyCluster` are made of this class (it
    adds no field: `SturdyCluster.initialize` changes each node's class)."""

    __slots__ = ()

    async def disconnect_free_connections(self) -> None:
        taken = list(self._free)
        self._free.clear()
        try:
            await asyncio.gather(*(c.disconnect() for c in taken), return_exceptions=True)
        finally:
            self._free.extend(taken)


class SturdyCluster(RedisCluster):
    """redis-py's async `RedisCluster` with `SturdyConnection`s on every node, known now or
    found later, whose own retries fail no other command, and whose keyed commands always go
    by the slot map.

    redis-py's cluster client closes itself whole (``aclose``: every connection of every node,
    those other commands are using too) to make its next command read the slot map again: in
    a pipeline's retry after a connection error, and in a command's handling of every fifth
    ``MOVED`` answer (``reinitialize_steps``) or of ``CLUSTERDOWN``. Closed, it also forgets
    its default node, and a command that starts before the map is read again has no route by
    its key: redis-py sends it, keyless, to any master, which answers ``MOVED``, and four
    more such answers close the client again. With four gateway workers setting up games on a
    cluster this ran for the whole set-up, every request in flight on a closed connection
    failed ("Connection closed by server.", "Connection lost", a torn transport) and the
    retries ran out as 503s. Here, within the client's own commands and pipelines, the client
    is released gently instead: every connection is marked to be reconnected by its next user
    (redis-py's own lazy way: none is closed from outside while a command may be using it),
    and the slot map is read again before the next command, which waits for it. Only a
    close from outside (the service stopping) closes the connections."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands_parser = _StreamKeysParser()
        self.nodes_manager.connection_kwargs["connection_class"] = SturdyConnection
        for node in self.nodes_manager.startup_nodes.values():
            node.connection_class = SturdyConnection
        self._sturdy_nodes()

    async def initialize(self, *args: Any, **kwargs: Any) -> SturdyCluster:
        """redis-py's, then every node found (in the slot map, or to start from) made a
        `SturdyNode` (a node found by a redirection meanwhile is made one at the next)."""
        await super().initialize(*args, **kwargs)
        self._sturdy_nodes()
        return self

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's, once the slot map is known (a keyed command never goes keyless to
        any master), with a close that its retries ask for done gently (`aclose`)."""
        if self._initialize:
            await self.initialize()
        token = _IN_CLIENT.set(True)
        try:
            return await super().execute_command(*args, **kwargs)
        finally:
            _IN_CLIENT.reset(token)

    def _sturdy_nodes(self) -> None:
        manager = self.nodes_manager
        for node in [*manager.startup_nodes.values(), *manager.nodes_cache.values()]:
            if type(node) is ClusterNode:
                node.__class__ = SturdyNode

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # redis-py's own refusal
        return _GentlePipeline(self, transaction)  # type: ignore[abstract]  # as redis-py makes its own

    async def aclose(self) -> None:
        if not _IN_CLIENT.get():  # from outside: the client closed for good
            await super().aclose()
            return
        self._initialize = True  # the slot map is read again before the next command
        nodes = {**self.nodes_manager.startup_nodes, **self.nodes_manager.nodes_cache}
        for node in nodes.values():  # each reconnected by its next user, none closed here
            for connection in node._connections:
                connection.mark_for_reconnect()  # type: ignore[no-untyped-call]


_STREAM_READS = {"XREAD": 0, "XREADGROUP": 3}
"""Stream reads, each with the arguments before its options (``GROUP group consumer``)."""
_WITH_VALUE = frozenset({"COUNT", "BLOCK"})


class _StreamKeysParser(AsyncCommandsParser):
    """redis-py's parser of a command's keys, reading a stream read's keys itself: redis-py
    asks a node for the keys of every command whose keys move (``COMMAND GETKEYS``, a round
    trip before each ``XREAD`` and ``XREADGROUP``: half the round trips of a feed reader on a
    cluster)."""

    async def get_keys(self, *args: Any) -> tuple[Any, ...] | None:
        keys = _stream_read_keys(str(args[0]), args[1:]) if args else None
        return await super().get_keys(*args) if keys is None else tuple(keys)


def _stream_read_keys(command: str, args: tuple[Any, ...]) -> list[Any] | None:
    """The keys of an ``XREAD`` or ``XREADGROUP`` (the first half of what follows
    ``STREAMS``), or None for any other command or a shape not understood here."""
    skip = _STREAM_READS.get(command.upper())
    if skip is None:
        return None
    position = skip
    while position < len(args):
        word = args[position]
        token = (word.decode() if isinstance(word, bytes) else str(word)).upper()
        if token == "STREAMS":
            rest = args[position + 1 :]
            if not rest or len(rest) % 2:
                return None
            return list(rest[: len(rest) // 2])
        position += 2 if token in _WITH_VALUE else 1
    return None


class _GentlePipeline(ClusterPipeline):
    """A cluster pipeline whose retries release its client gently (`SturdyCluster`)."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        token = _IN_CLIENT.set(True)
        try:
            return await super().execute(raise_on_error, allow_redirections)
        finally:
            _IN_CLIENT.reset(token)


CREDENTIALS = ("username", "password", "ssl", "ssl_ca_certs", "ssl_cert_reqs")
"""What a client of its own takes over from the client it stands beside (`cluster_beside`)."""


async def cluster_beside(
    shared: RedisCluster, *, retries: int = RETRIES, **kwargs: Any
) -> SturdyCluster:
    """A cluster client of its own on ``shared``'s nodes and credentials (healing, with
    ``kwargs`` added): a subscription or a blocking read that must not share connections
    with the commands' client. ``retries=0``: a command whose connection fails is not sent
    again (redirections are still followed)."""
    await shared.initialize()  # its nodes are known once it is
    node = shared.get_default_node()
    credentials = {k: v for k, v in node.connection_kwargs.items() if k in CREDENTIALS}
    healing = healing_options(cluster=True, retries=retries)
    return SturdyCluster(host=node.host, port=node.port, **credentials, **healing, **kwargs)


def plain_beside(shared: Redis, *, retries: int = RETRIES, **kwargs: Any) -> Redis:
    """A client with a pool of its own on ``shared``'s server and options (healing, with
    ``kwargs`` added): a subscription or a blocking read that must not share connections
    with the commands' client (`cluster_beside` on a cluster). ``retries=0``: a command or a
    read whose connection fails raises to its caller instead of being sent again, and the
    client never connects again behind its caller's back. Closing the client closes its pool."""
    pool = shared.connection_pool
    options = {**pool.connection_kwargs, **healing_options(retries=retries), **kwargs}
    return Redis.from_pool(ConnectionPool(connection_class=pool.connection_class, **options))


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``)."""
    return url.lower().startswith(CLUSTER_SCHEMES)


def plain_url(url: str) -> str:
    """The URL with ``+cluster`` dropped, as redis-py and FastStream take it."""
    if is_cluster_url(url):
        scheme, rest = url.split("://", 1)
        return f"{scheme.split('+', 1)[0]}://{rest}"
    return url


def redis_client(url: str, **kwargs: Any) -> Any:
    """An asyncio client for ``url`` returning bytes: `RedisCluster` for a cluster URL (at
    most `CLUSTER_NODE_CONNECTIONS` per node unless ``max_connections`` says otherwise),
    `Redis` otherwise (typed loosely: the two share their command methods, not a base)."""
    if is_cluster_url(url):
        # A cluster has one database: a path (/0) is accepted and dropped.
        return SturdyCluster.from_url(
            urlunsplit(urlsplit(plain_url(url))._replace(path="")),
            **{
                "max_connections": CLUSTER_NODE_CONNECTIONS,
                **healing_options(cluster=True),
                **kwargs,
            },
        )
    return Redis.from_url(
        url, **{"connection_class": PackedConnection, **healing_options(), **kwargs}
    )


def sync_client(url: str, **kwargs: Any) -> Any:
    """A blocking client for ``url`` (a probe, a one-off tool): redis-py's synchronous
    `redis.cluster.RedisCluster` for a cluster URL, `redis.Redis` otherwise."""
    import redis
    import redis.cluster

    if is_cluster_url(url):
        cluster_url = urlunsplit(urlsplit(plain_url(url))._replace(path=""))
        return redis.cluster.RedisCluster.from_url(cluster_url, **kwargs)
    return redis.Redis.from_url(url, **kwargs)


def blocking_pool(
    url: str, *, max_connections: int, timeout: float | None
) -> BlockingConnectionPool:
    """A healing `BlockingConnectionPool` for a plain (not cluster) ``url``: a request beyond
    ``max_connections`` waits up to ``timeout`` seconds for a free connection."""
    return BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout,
        connection_class=PackedConnection,
        **healing_options(),
    )


def is_cluster(client: Any) -> bool:
    """Whether ``client`` talks to a Redis Cluster."""
    return isinstance(client, RedisCluster)


async def each_reply(client: Any, commands: Sequence[Sequence[Any]]) -> list[Any]:
    """Each command's reply, or its error as a value (a `ResponseError`: a script Redis lost,
    a refused write), in one round trip; a lost connection is raised, as by a pipeline.

    Several commands go in one pipeline; one alone (a lone game's move, the usual case on a
    quiet server) goes as itself on a plain client: a one-command pipeline cost redis-py about
    50 us more of CPU than the command (200-230 against 150-165 us a round trip here), on every
    move of a lone game in each service that appends or writes models. On a cluster every
    batch goes in a pipeline (its routing and retries are the cluster pipeline's)."""
    if len(commands) == 1 and not is_cluster(client):
        try:
            return [await client.execute_command(*commands[0])]
        except ResponseError as error:
            return [error]
    return list(await pipeline_of(client, commands).execute(raise_on_error=False))


def pipeline_of(client: Any, commands: Sequence[Sequence[Any]]) -> Any:
    """A pipeline (no transaction) holding ``commands``, for a caller to add to or run."""
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return pipe
