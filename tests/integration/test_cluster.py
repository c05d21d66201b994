"""The event store on a real Redis Cluster (three masters, a replica each, started from
``redis-server`` binaries on free ports by ``tests/redis_cluster.py``).

The store's whole contract runs on the cluster too (``tests/integration/test_store_contract.py``,
back end ``cluster``); here: what only a cluster shows. Every key a command touches lives in its
game's hash slot, acknowledgements wait for a replica (durability ``replica``: ``WAIT 1`` on the
master written to), and a master killed in the middle of a game loses nothing that was
acknowledged: its replica takes over with every acknowledged event.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import msgspec
import pytest
from redis.asyncio.cluster import RedisCluster as AsyncCluster
from redis.cluster import RedisCluster as SyncCluster
from redis.crc import key_slot
from redis.exceptions import RedisClusterException, RedisError

from devkit import redis_cluster, redis_server
from devkit.redis_cluster import (  # noqa: F401 (the fixtures redis_cluster and cluster_redis)
    Node,
    RedisCluster,
    cluster_redis_fixture,
    redis_cluster_fixture,
)
from devkit.waiting import eventually
from eventstore import (
    Appended,
    AppendRequest,
    Duplicate,
    RedisEventStore,
    StoreError,
)
from eventstore.redis_client import is_cluster, is_cluster_url, plain_url, redis_client
from renature import commands as c
from renature.state import GameState
from support.hosting import state_as
from support.reads import blocked_reads, group_reads

pytestmark = pytest.mark.redis


def event(n: int) -> bytes:
    return msgspec.json.encode({"type": "Moved", "n": n})


def test_a_cluster_url_makes_a_cluster_client() -> None:
    assert is_cluster_url("redis+cluster://127.0.0.1:7000/0")
    assert is_cluster_url("rediss+cluster://h:1")
    assert not is_cluster_url("redis://127.0.0.1:6379/0")
    assert plain_url("redis+cluster://127.0.0.1:7000/0") == "redis://127.0.0.1:7000/0"
    assert plain_url("redis://h:1/2") == "redis://h:1/2"


async def test_a_connection_torn_in_its_handshake_is_retried_not_a_500(
    redis_cluster: RedisCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster node's connection whose transport is closed under its handshake by a
    concurrent disconnect (redis-py raises ``RuntimeError``/``AttributeError`` there, which its
    cluster client does not retry: a 500 in the gateway) fails as a ``ConnectionError``, and
    the command goes through on a fresh connection; a plain client shows the failure."""
    from redis.asyncio.connection import AbstractConnection

    from eventstore.redis_client import SturdyConnection, redis_client

    redis_cluster.wait_ready()
    torn = {"left": 0}
    handshake = AbstractConnection.on_connect_check_health

    async def tears(self: AbstractConnection, *args: Any, **kwargs: Any) -> None:
        if torn["left"]:
            torn["left"] -= 1
            raise AttributeError("'NoneType' object has no attribute 'write'")
        await handshake(self, *args, **kwargs)

    monkeypatch.setattr(AbstractConnection, "on_connect_check_health", tears)
    plain = AsyncCluster.from_url(plain_url(redis_cluster.url).rsplit("/", 1)[0])
    sturdy = redis_client(redis_cluster.url)
    try:
        await plain.initialize()
        await sturdy.initialize()
        nodes = sturdy.get_nodes()
        assert {node.connection_class for node in nodes} == {SturdyConnection}
        for client in (plain, sturdy):  # no connection is open yet: the next one is torn
            for node in client.get_nodes():
                await node.disconnect()
        torn["left"] = 1
        with pytest.raises(AttributeError):
            await plain.set("torn-key", "1")
        torn["left"] = 1
        assert await sturdy.set("torn-key", "2")
        assert torn["left"] == 0
        assert await sturdy.get("torn-key") == b"2"
    finally:
        await plain.aclose()
        await sturdy.aclose()


@pytest.mark.parametrize("gentle", [True, False], ids=["sturdy-client", "redis-py-client"])
async def test_a_pipeline_retry_leaves_the_connections_of_other_commands_alone(
    redis_cluster: RedisCluster, monkeypatch: pytest.MonkeyPatch, gentle: bool
) -> None:
    """redis-py's cluster pipeline retries a connection error after closing its whole client,
    the connections other commands are waiting on included; ours releases it gently (free
    connections closed, busy ones reconnected after their command). A command in flight (a
    BLPOP) keeps its connection through the retry, and both complete."""
    from redis.asyncio import cluster as cluster_module
    from redis.exceptions import ConnectionError as RedisConnectionError

    from eventstore.redis_client import redis_client

    redis_cluster.wait_ready()
    failing = {"left": 1}
    original = cluster_module.PipelineStrategy._execute

    async def flaky(self: Any, *args: Any, **kwargs: Any) -> Any:
        if failing["left"]:
            failing["left"] -= 1
            raise RedisConnectionError("Connection closed by server.")
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(cluster_module.PipelineStrategy, "_execute", flaky)
    url = redis_cluster.url
    client = _cluster_client(url, ours=gentle)
    pusher = redis_client(url)
    try:
        waiting, _, busy = await _blpop_in_flight(client, "gentle-list")
        pipe = client.pipeline()
        pipe.set("gentle-other", "1")
        assert await pipe.execute() == [True]
        assert failing["left"] == 0
        kept = all(c._writer is writer for c, writer in busy.items())
        assert kept is gentle  # redis-py's client closed them (and the BLPOP sent again)
        await pusher.lpush("gentle-list", "v")
        assert await asyncio.wait_for(waiting, 10) == (b"gentle-list", b"v")
    finally:
        await client.aclose()
        await pusher.aclose()


def _cluster_client(url: str, *, ours: bool) -> Any:
    """Our cluster client (`SturdyCluster`), or redis-py's own as the control."""
    return redis_client(url) if ours else AsyncCluster.from_url(plain_url(url))


async def _blpop_in_flight(client: Any, key: str) -> tuple[asyncio.Task[Any], Any, dict[Any, Any]]:
    """A BLPOP of ``key`` waiting on its node (the client initialized first): the task, the
    node, and the writer of each connection of the node in use now (the BLPOP's among them)."""
    await client.initialize()
    waiting = asyncio.create_task(client.blpop([key], timeout=5))
    node = client.get_node_from_key(key)
    await eventually(lambda: len(node._connections) > len(node._free), "the BLPOP in flight")
    return waiting, node, {c: c._writer for c in node._connections if c not in node._free}


@pytest.mark.parametrize("sturdy", [True, False], ids=["sturdy-client", "redis-py-client"])
async def test_a_sweep_of_free_connections_closes_none_a_command_took_meanwhile(
    redis_cluster: RedisCluster, sturdy: bool
) -> None:
    """After a connection error the cluster client disconnects a node's free connections: it
    lists them, and closes them a loop iteration later. A command that takes one of them in
    between (what the next request does) had it closed under it with redis-py's nodes ("Connection
    lost", "Connection closed by server.": the gateway's 503s with four workers on a cluster);
    with ours the sweep took them off the free list first, and the command's connection is
    left alone."""
    from eventstore.redis_client import SturdyNode

    redis_cluster.wait_ready()
    url = redis_cluster.url
    client = _cluster_client(url, ours=sturdy)
    try:
        await client.initialize()
        node = client.get_node_from_key("sweep-key")
        assert isinstance(node, SturdyNode) is sturdy
        await asyncio.gather(*(client.get("sweep-key") for _ in range(4)))
        assert node._free  # connections open and free, as between requests
        sweep = asyncio.create_task(node.disconnect_free_connections())
        await asyncio.sleep(0)  # the sweep has listed the free connections; none closed yet
        taken = node.acquire_connection()  # as the next command does
        was_open = taken.is_connected
        await sweep
        closed_under_it = was_open and not taken.is_connected
        assert closed_under_it is not sturdy
        if sturdy:  # the swept ones are back on the free list, to reconnect when next used
            assert node._free
            assert not any(c.is_connected for c in node._free)
        node.release(taken)
        assert await client.get("sweep-key") is None  # and the client goes on
    finally:
        await client.aclose()


def _nodes_count(cluster: RedisCluster, section: str, entry: str, field: str) -> int:
    """A counter of ``INFO section`` summed over the cluster's running nodes."""
    total = 0
    for node in cluster.nodes:
        if node.running:
            total += int(node.client().info(section).get(entry, {}).get(field, 0))
    return total


def _moved_answers(cluster: RedisCluster) -> int:
    """``MOVED`` answers the cluster's running nodes have given so far."""
    return _nodes_count(cluster, "errorstats", "errorstat_MOVED", "count")


def _getkeys_asked(cluster: RedisCluster) -> int:
    """``COMMAND GETKEYS`` the cluster's running nodes have answered so far."""
    return _nodes_count(cluster, "commandstats", "cmdstat_command|getkeys", "calls")


@pytest.mark.parametrize("sturdy", [True, False], ids=["sturdy-client", "redis-py-client"])
async def test_a_fresh_clients_first_commands_go_to_their_keys_masters(
    redis_cluster: RedisCluster, sturdy: bool
) -> None:
    """redis-py's cluster client decides how to route a command before it reads the slot map:
    a keyed command that starts while the map is unknown (the client new, or just closed by
    its own retry) goes keyless to any master, which answers ``MOVED``. Ours reads the map
    first: no master is asked for a key it does not hold."""
    redis_cluster.wait_ready()
    url = redis_cluster.url
    before = _moved_answers(redis_cluster)
    client = _cluster_client(url, ours=sturdy)
    try:
        keys = [f"first-{n}" for n in range(30)]  # spread over the three masters
        found = await asyncio.gather(*(client.get(k) for k in keys), return_exceptions=True)
        misrouted = _moved_answers(redis_cluster) - before
        assert (misrouted == 0) is sturdy, misrouted
        if sturdy:  # (redis-py's may also fail some: its retry closed their connections)
            assert found == [None] * len(keys)
    finally:
        await client.aclose()


@pytest.mark.parametrize("sturdy", [True, False], ids=["sturdy-client", "redis-py-client"])
async def test_moved_answers_leave_the_connections_of_other_commands_alone(
    redis_cluster: RedisCluster, sturdy: bool
) -> None:
    """At every fifth ``MOVED`` answer (a slot map gone stale, as after a resharding)
    redis-py's cluster client closes itself whole, the connections other commands are waiting
    on included (the gateway's set-up on a cluster: "Connection closed by server." and 503s).
    Ours reads the slot map again and leaves those connections alone: a command in flight (a
    BLPOP) keeps its connection, every redirected command completes, and the next ones go
    straight to their masters."""
    redis_cluster.wait_ready()
    url = redis_cluster.url
    client = _cluster_client(url, ours=sturdy)
    pusher = redis_client(url)
    try:
        waiting, node, busy = await _blpop_in_flight(client, "moved-list")
        elsewhere = (f"moved-{n}" for n in range(1000))
        keys = [k for k in elsewhere if client.get_node_from_key(k) is not node][:10]
        for key in keys:  # the client's map made stale: these slots said to be on node
            client.nodes_manager.slots_cache[key_slot(key.encode())] = [node]
        sets = await asyncio.gather(*(client.set(k, "1") for k in keys), return_exceptions=True)
        if sturdy:  # (redis-py's may also fail some: its close tore their connections)
            assert sets == [True] * len(keys)
        kept = all(c._writer is writer for c, writer in busy.items())
        assert kept is sturdy  # redis-py's client closed them (and the BLPOP sent again)
        if not sturdy:  # the control has shown its fault; what follows is ours alone
            waiting.cancel()
            return
        assert all(client.get_node_from_key(k) is not node for k in keys)  # the map read again
        before = _moved_answers(redis_cluster)
        assert await asyncio.gather(*(client.get(k) for k in keys)) == [b"1"] * len(keys)
        assert _moved_answers(redis_cluster) == before
        await pusher.lpush("moved-list", "v")
        assert await asyncio.wait_for(waiting, 10) == (b"moved-list", b"v")
    finally:
        await client.aclose()
        await pusher.aclose()


async def test_games_of_many_partitions_append_and_feed_on_the_cluster(
    cluster_redis: AsyncCluster,
) -> None:
    assert is_cluster(cluster_redis)
    store = RedisEventStore(cluster_redis, durability="replica")  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    games = [f"game-{n}" for n in range(24)]
    slots = {key_slot(store.layout.game_key(g).encode()) for g in games}
    assert len(slots) > 3  # the games spread over several slots (and masters)
    results = await store.append_many(
        [_request(game, f"c-{game}", 0, [event(1), event(2)]) for game in games]
    )
    assert all(result == Appended(1, 2) for result in results)
    for p in store.partitions():
        await store.ensure_group(p, "check")
    found = await store.read_group("check", "r", store.partitions(), count=1000)
    assert sorted((f.game_id, f.version) for f in found) == sorted(
        (g, v) for g in games for v in (1, 2)
    )
    again = await store.append_many([_request(games[0], f"c-{games[0]}", 0, [event(1)])])
    assert isinstance(again[0], Duplicate)
    assert sorted(await store.list_games()) == sorted(games)


async def test_a_blocked_read_of_several_partitions_wakes_on_an_append(
    cluster_redis: AsyncCluster,
) -> None:
    store = RedisEventStore(cluster_redis, durability="replica")  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    for p in store.partitions():
        await store.ensure_group(p, "g", start_id="$")
    before = await group_reads(cluster_redis)
    reader = asyncio.create_task(
        store.read_group("g", "r", store.partitions(), count=10, block_ms=5_000)
    )

    async def reading() -> bool:  # a first round over every partition found nothing
        return await group_reads(cluster_redis) >= before + len(store.partitions())

    await eventually(reading, "the reader polling the feeds")
    started = time.monotonic()
    await store.append("late", command_id="c", expected_version=0, events=[event(1)], outcome=b"")
    found = await asyncio.wait_for(reader, timeout=5)
    assert [(f.game_id, f.version) for f in found] == [("late", 1)]
    assert time.monotonic() - started < 1.0


async def test_an_idle_reader_of_several_feeds_waits_without_polling(
    cluster_redis: AsyncCluster,
) -> None:
    """A reader of every feed on a cluster keeps one blocking read per feed in flight: while
    nothing comes it sends each feed's read once a second (the polling reader it replaces
    sent all sixteen every 50 ms, 320 reads a second, the cost of an idle projector)."""
    store = RedisEventStore(cluster_redis, durability="replica")  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    feeds = len(store.partitions())
    for p in store.partitions():
        await store.ensure_group(p, "idle", start_id="$")
    try:
        before = await group_reads(cluster_redis)
        started = time.monotonic()
        while time.monotonic() - started < 1.0:
            assert await store.read_group("idle", "r", store.partitions(), block_ms=400) == []
        sent = await group_reads(cluster_redis) - before
        assert feeds <= sent <= feeds * 3  # a first round, then one per feed per second
    finally:
        await store.close_reads()
    await eventually(lambda: _none_blocked(store), "the reads cancelled")


async def _none_blocked(store: RedisEventStore) -> bool:
    return await blocked_reads(store) == 0


async def test_what_a_read_brought_after_its_call_gave_up_is_returned_by_the_next(
    cluster_redis: AsyncCluster,
) -> None:
    """A call may wait less than the reads it leaves in flight (a second at least on the
    server): an entry one of them takes after that call returned is in the next call's
    result, and once only."""
    store = RedisEventStore(cluster_redis, durability="replica")  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    for p in store.partitions():
        await store.ensure_group(p, "later", start_id="$")
    try:
        assert await store.read_group("later", "r", store.partitions(), block_ms=50) == []
        kept = [event(1)]
        await store.append("kept", command_id="c", expected_version=0, events=kept, outcome=b"")
        await eventually(lambda: _none_pending_on_the_server(store), "the read in flight answered")
        found = await store.read_group("later", "r", store.partitions(), block_ms=0)
        assert [(f.game_id, f.version) for f in found] == [("kept", 1)]
        assert await store.read_group("later", "r", store.partitions(), block_ms=100) == []
    finally:
        await store.close_reads()


async def _none_pending_on_the_server(store: RedisEventStore) -> bool:
    """The entry appended has been handed to the reader (pending in its group)."""
    partition = store.partition_of("kept")
    summary = await store._redis.xpending(store.feed_key(partition), "later")
    return int(summary["pending"]) == 1


@pytest.mark.parametrize("sturdy", [True, False], ids=["sturdy-client", "redis-py-client"])
async def test_a_stream_read_is_routed_without_asking_a_node_for_its_keys(
    redis_cluster: RedisCluster, sturdy: bool
) -> None:
    """redis-py's cluster client asks a node for the keys of every command whose keys move
    (``COMMAND GETKEYS``) before it can route it: an ``XREAD`` or ``XREADGROUP`` cost two round
    trips. Ours reads a stream read's keys itself, and each read still goes straight to its
    key's master (no ``MOVED``)."""
    redis_cluster.wait_ready()
    url = redis_cluster.url
    client = _cluster_client(url, ours=sturdy)
    try:
        await client.initialize()
        streams = [f"routed-{sturdy}-{n}" for n in range(12)]  # over the three masters
        for stream in streams:
            await client.xadd(stream, {"f": "v"})
            await client.xgroup_create(stream, "streams", id="0")  # a group named like the token
        asked, moved = _getkeys_asked(redis_cluster), _moved_answers(redis_cluster)
        for stream in streams:
            read = await client.xread({stream: "0"}, count=1)
            assert read[0][0] == stream.encode()
            taken = await client.xreadgroup("streams", "streams", {stream: ">"}, count=5, block=10)
            assert len(taken[0][1]) == 1
        assert (_getkeys_asked(redis_cluster) == asked) is sturdy
        assert _moved_answers(redis_cluster) == moved
    finally:
        await client.aclose()


async def test_a_master_killed_mid_game_loses_nothing_acknowledged() -> None:
    """Appends acknowledged under ``WAIT 1`` survive the crash of their master: the replica
    that takes over holds every one of them. Until the crashed node is back (as a replica of
    the new master) no append can be acknowledged (no replica to wait for), and then the game
    goes on from there."""
    with RedisCluster(masters=3, replicas=1, node_timeout_ms=1000) as cluster:
        client = redis_client(cluster.url, socket_timeout=5, socket_connect_timeout=5)
        store = RedisEventStore(client, durability="replica", wait_timeout_ms=1000)
        game = "failover-game"
        master = cluster.master_of(store.layout.game_key(game))
        acknowledged: dict[int, bytes] = {}
        version = 0
        retries = 0
        recovery: threading.Thread | None = None
        try:
            for n in range(40):
                if n == 15:
                    cluster.kill(master)  # mid-game, right after an acknowledged append
                    recovery = threading.Thread(target=_bring_back, args=(cluster, master))
                    recovery.start()
                deadline = time.monotonic() + 60
                while True:
                    try:
                        result = await store.append(
                            game,
                            command_id=f"c{n}",
                            expected_version=version,
                            events=[event(n)],
                            outcome=b"ok",
                        )
                        break
                    except StoreError:  # the master is gone and no replica took over yet
                        retries += 1
                        assert time.monotonic() < deadline, "no failover within 60 s"
                        await asyncio.sleep(0.2)
                if isinstance(result, Duplicate):  # appended, but its answer was lost
                    version = await store.version(game)
                    continue
                assert isinstance(result, Appended), result
                version = result.last_version
                acknowledged[version] = event(n)
            stored = {e.version: e.data for e in await store.read(game)}
        finally:
            await client.aclose()
            if recovery is not None:
                recovery.join(timeout=60)
    assert retries > 0  # the kill was felt
    missing = {v for v, data in acknowledged.items() if stored.get(v) != data}
    assert not missing, f"acknowledged versions lost: {sorted(missing)}"
    assert sorted(stored) == list(range(1, len(stored) + 1))  # no gap, no fork


def _bring_back(cluster: RedisCluster, dead: Node) -> None:
    """Once a replica took the dead master's slots, restart the dead node (it rejoins as the
    new master's replica) and wait until it is in sync."""
    cluster.wait_failover(dead)
    cluster.restart(dead)
    cluster.wait_ready(timeout=60)


def _request(game: str, command: str, version: int, events: list[bytes]) -> AppendRequest:
    return AppendRequest(game, command, version, events, b"ok")


@pytest.mark.parametrize("count", [4, 16])
async def test_commands_spread_over_the_shards_by_their_games_partition(
    redis_cluster: RedisCluster, cluster_redis: AsyncCluster, count: int
) -> None:
    """The command streams spread over every master (the default 4 streams as well as one per
    partition, each then in its games' hash slot), and the rules service answers every
    command of games of every partition."""
    from eventstore import CommandPartitions, KeyLayout
    from gameserver.rules.rules_service import RulesService
    from gameserver.runtime.bus import CommandEnvelope
    from gameserver.runtime.rules_client import RulesClient
    from gameserver.runtime.settings import Settings

    commands = CommandPartitions(KeyLayout(), count)
    games = [f"shard-game-{n}" for n in range(48)]
    assert {KeyLayout().partition_of(g) for g in games} == set(range(16))
    settings = Settings.of(
        redis_url=redis_cluster.url,
        durability="replica",
        consumer="rules-s",
        command_partitions=count,
    )
    async with RulesService(settings), RulesClient(cluster_redis, streams=commands) as client:  # type: ignore[arg-type]  # a cluster client
        replies = await asyncio.gather(
            *(client.send(CommandEnvelope(g, "c", c.CreateGame(g, 2, "")), 10) for g in games)
        )
    assert {r.status for r in replies} == {"accepted"}
    for game in games:  # stream k lives in the slot of partition k
        partition = KeyLayout().partition_of(game) % count
        stream = commands.stream_of(game)
        assert key_slot(stream.encode()) == key_slot(KeyLayout().feed_key(partition).encode())
    masters = {redis_cluster.master_of(s).port for s in commands.streams()}
    assert len(masters) == 3  # every master carries command streams
    lengths = [await cluster_redis.xlen(s) for s in commands.streams()]
    assert sum(lengths) == len(games)
    assert all(lengths)


async def test_a_quiet_shard_reply_channel_hears_its_own_probe(
    cluster_redis: AsyncCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quiet reply channel probes itself (``SPUBLISH`` on a cluster): the probe comes back,
    so the subscription is kept rather than made again and again."""
    from structlog.testing import capture_logs

    from gameserver.runtime import rules_client
    from gameserver.runtime.rules_client import RulesClient

    monkeypatch.setattr(rules_client, "PROBE_AFTER_S", 0.2)
    sent = 0
    original = rules_client._probe

    async def counted(*args: Any) -> None:
        nonlocal sent
        sent += 1
        await original(*args)

    monkeypatch.setattr(rules_client, "_probe", counted)
    with capture_logs() as logs:
        async with RulesClient(cluster_redis):  # type: ignore[arg-type]  # a cluster client
            await asyncio.sleep(2.5)  # get_message waits a second at a time
    assert sent >= 2
    assert [log for log in logs if log["event"] == "reply_channel_lost"] == []


async def test_a_command_whose_cluster_connection_closed_is_sent_once_more(
    redis_cluster: RedisCluster, cluster_redis: AsyncCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a cluster, redis-py reconnects a node's other connections when one fails, and the
    commands in flight on them fail with "Connection closed by server.": such a command is sent
    once more and decided once; one that fails twice is raised (the gateway's 503)."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    from gameserver.rules.rules_service import RulesService
    from gameserver.runtime import rules_client
    from gameserver.runtime.bus import CommandEnvelope
    from gameserver.runtime.rules_client import RulesClient
    from gameserver.runtime.settings import Settings

    failures = {"left": 1}
    original = rules_client._xadd_all

    async def closing(redis: Any, batch: list[Any], maxlen: int) -> list[Any]:
        if failures["left"]:
            failures["left"] -= 1
            return [RedisConnectionError("Connection closed by server.")] * len(batch)
        return await original(redis, batch, maxlen)

    monkeypatch.setattr(rules_client, "_xadd_all", closing)
    settings = Settings.of(redis_url=redis_cluster.url, durability="replica", consumer="rules-r")
    game = "resent-game"
    async with RulesService(settings), RulesClient(cluster_redis) as client:  # type: ignore[arg-type]  # a cluster client
        reply = await client.send(CommandEnvelope(game, "c", c.CreateGame(game, 2, "")), 10)
        assert reply.status == "accepted"
        assert failures["left"] == 0
        failures["left"] = 2
        with pytest.raises(RedisConnectionError):
            await client.send(CommandEnvelope(game, "j", c.JoinGame(0, "ann"), seat=0), 10)
    store = RedisEventStore(cluster_redis)  # type: ignore[arg-type]  # a cluster client
    assert await store.version(game) == 1  # created once; the join never reached a stream


async def test_a_game_through_the_gateway_on_the_cluster(
    redis_cluster: RedisCluster, cluster_redis: AsyncCluster
) -> None:
    """The whole path on the cluster: the gateway (HTTP), the rules service (FastStream's
    RedisClusterBroker, on our cluster client) and the board projector, a game played to its
    end; every write waits for a replica, and no client asked a node for a command's keys
    (``COMMAND GETKEYS``: redis-py's own cluster client does before every stream read)."""
    import httpx

    from gameserver.cli.gateway_client import GatewayClient
    from gameserver.gateway.app import create_app
    from gameserver.projectors import BoardProjection
    from gameserver.projectors.projector_runner import create_projector, model_key
    from gameserver.rules.rules_service import RulesService
    from gameserver.runtime.settings import Settings
    from support.gateway import gateway_settings

    settings = Settings.of(redis_url=redis_cluster.url, durability="replica", consumer="rules-c")
    app = create_app(
        gateway_settings(redis_cluster.url, allow_chosen_seeds=True), command_timeout=10.0
    )
    store = RedisEventStore(cluster_redis)  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    stop = asyncio.Event()
    board = create_projector(
        settings.with_(consumer="board-c"),
        cluster_redis,  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
        BoardProjection(),
    )
    projecting = asyncio.create_task(board.run(stop, reclaim_every=10.0))
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            RulesService(settings),
            app.router.lifespan_context(app),
            GatewayClient("http://gateway", transport=transport) as client,
        ):
            asked = _getkeys_asked(redis_cluster)
            game_id = await client.create_game(2, seed="on-the-cluster")
            tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
            await client.start(game_id, tokens[0])
            seat, moves = 0, 0
            while True:
                state = await state_as(client, game_id, tokens[seat], GameState)
                if state.phase in ("final_scoring", "finished"):
                    break
                seat = state.current
                legal = await client.legal_actions(game_id, tokens[seat])
                await client.send(game_id, tokens[seat], legal[0], command_id=f"m{moves}")
                moves += 1
                assert moves < 2_000
            deadline = time.monotonic() + 10
            while (await state_as(client, game_id, tokens[0], GameState)).phase != "finished":
                assert time.monotonic() < deadline, "the game did not finish"
                await asyncio.sleep(0.05)
            version = await store.version(game_id)
            key = model_key(store.layout, "board", game_id)
            while int(await cluster_redis.hget(key, "version") or 0) < version:
                assert time.monotonic() < deadline + 10, "the board model lags behind"
                await asyncio.sleep(0.05)
            assert _getkeys_asked(redis_cluster) == asked
    finally:
        stop.set()
        await asyncio.wait_for(projecting, timeout=15)
    assert moves > 20


async def test_replies_travel_on_a_shard_channel_and_follow_it_through_a_failover() -> None:
    """A `RulesClient` on a cluster subscribes a shard channel on the master of the channel's
    slot (a plain subscriber of the same name elsewhere hears nothing: no broadcast); when
    that master dies its replica takes the slot over, the subscription moves there, and
    commands sent after the failover get their replies."""
    from gameserver.rules.rules_service import RulesService
    from gameserver.runtime.bus import CommandEnvelope, Reply, is_shard_channel
    from gameserver.runtime.rules_client import CommandTimeout, RulesClient
    from gameserver.runtime.settings import Settings

    with RedisCluster(masters=3, replicas=1, node_timeout_ms=1000) as cluster:
        client = redis_client(cluster.url, socket_timeout=5, socket_connect_timeout=5)
        # everysec: an append needs no replica while the killed master is away
        settings = Settings.of(redis_url=cluster.url, durability="everysec", consumer="rules-f")
        try:
            async with RulesService(settings), RulesClient(client) as rules:
                assert is_shard_channel(rules.channel)
                owner = cluster.master_of(rules.channel)
                other = next(n for n in cluster.nodes if n.port != owner.port).client()
                plain = other.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]  # redis-py's sync pubsub is untyped
                plain.subscribe(rules.channel)  # PUBLISH would reach it from any node
                reply = await rules.send(CommandEnvelope("f0", "c", c.CreateGame("f0", 2, "")))
                assert reply.status == "accepted"
                assert plain.get_message(timeout=0.5) is None
                plain.close()
                other.close()
                cluster.kill(owner)
                await asyncio.to_thread(cluster.wait_failover, owner)
                deadline = time.monotonic() + 60
                envelope = CommandEnvelope("f1", "c", c.CreateGame("f1", 2, ""))
                answer: object = None
                while not isinstance(answer, Reply) and time.monotonic() < deadline:
                    try:  # resent with the same command id until its reply arrives
                        answer = await rules.send(envelope, timeout=3)
                    except (CommandTimeout, RedisError, RedisClusterException) as error:
                        answer = error
                assert isinstance(answer, Reply), f"no reply after the failover: {answer!r}"
                assert answer.status == "accepted"
                assert cluster.master_of(rules.channel).port != owner.port
        finally:
            await client.aclose()


def test_a_node_whose_port_was_taken_meanwhile_starts_on_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A port handed out free may be bound by another test's server before the node binds it
    (the node exits: "Address already in use"); the cluster starts that node on other ports."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        handed = iter([taken.getsockname()[1]])
        monkeypatch.setattr(
            redis_cluster, "free_port", lambda: next(handed, None) or redis_server.free_port()
        )
        with RedisCluster(masters=3, replicas=0) as cluster:
            ports = [node.port for node in cluster.nodes]
            assert taken.getsockname()[1] not in ports
            assert len(set(ports + [node.bus_port for node in cluster.nodes])) == 6
            served = SyncCluster(host="127.0.0.1", port=ports[0], socket_timeout=5)
            try:
                assert all(served.set(f"key-{n}", n) for n in range(20))  # every master's
                assert [int(served.get(f"key-{n}") or -1) for n in range(20)] == list(range(20))
            finally:
                served.close()
