"""The live channels on a real Redis Cluster: the worker's feed reader has its own cluster
client (the gateway's nodes and credentials, a socket timeout longer than the block), a
channel follows a game through it, and a read cut under it fails instead of being sent again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import cast

import pytest
import redis.exceptions

from devkit.redis_cluster import (  # noqa: F401 (the fixtures redis_cluster and cluster_redis)
    RedisCluster,
    cluster_redis_fixture,
    redis_cluster_fixture,
)
from eventstore import AppendRequest, RedisEventStore
from gameserver.gateway import live_hub
from gameserver.gateway.app import create_app
from gameserver.gateway.live_hub import READ_BLOCK_MS, SOCKET_MARGIN_S, feed_reads, live_reader
from gameserver.gateway.live_socket import follow
from renature import commands as c
from renature import events as e
from renature.game import replay
from renature.rules import execute
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


async def test_the_live_reader_follows_a_game_on_the_cluster(
    redis_cluster: RedisCluster, cluster_redis: object
) -> None:
    app = create_app(gateway_settings(redis_cluster.url))
    gateway = app.state.gateway
    store = RedisEventStore(cluster_redis)  # type: ignore[arg-type]  # a cluster client: the store serves it as one Redis
    events, _ = execute(None, c.CreateGame(game_id="live-c", players=2, seed="s"))
    request = AppendRequest("live-c", "create", 0, [e.encode(ev) for ev in events], b"ok")
    await store.append_many([request])
    reader = await live_reader(gateway.redis)
    try:
        timeout = READ_BLOCK_MS / 1000 + SOCKET_MARGIN_S
        assert reader.get_connection_kwargs()["socket_timeout"] == timeout
        stream = follow(gateway, "live-c", 0, "renature", 0)
        (first,) = await asyncio.wait_for(anext(stream), 10)
        assert isinstance(first, e.GameCreated)
        events, _ = execute(replay(events), c.JoinGame(seat=0, name="ann"))
        request = AppendRequest("live-c", "join", 1, [e.encode(ev) for ev in events], b"ok")
        await store.append_many([request])  # appended while the channel follows: the feed
        (second,) = await asyncio.wait_for(anext(stream), 10)
        assert second.version == 2
        await cast("AsyncGenerator[list[e.Event], None]", stream).aclose()
    finally:
        await reader.aclose()
        await gateway.live.aclose()
        await gateway.redis.aclose()


async def test_a_feed_read_cut_on_the_cluster_fails_and_is_not_sent_again(
    redis_cluster: RedisCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The master serving a feed drops the reader's connection during its blocking read (as a
    restart or a failover does): the read fails at once. Sent again, it would block anew and
    could read another history's entries on a server that came back without its last writes;
    failed, the reader fixes a new position and its followers check the stream (see
    `test_live_channels`)."""
    monkeypatch.setattr(live_hub, "READ_BLOCK_MS", 4_000)
    app = create_app(gateway_settings(redis_cluster.url))
    gateway = app.state.gateway
    key = gateway.layout.feed_key(0)
    reader = await live_reader(gateway.redis, block_ms=4_000)
    try:
        read = await feed_reads(reader, key)
        reading = asyncio.create_task(read(b"9999999999999-0"))  # nothing comes: it blocks
        await asyncio.sleep(0.5)
        redis_cluster.master_of(key).client().client_kill_filter(_type="normal", skipme=True)
        with pytest.raises(redis.exceptions.ConnectionError):
            await asyncio.wait_for(reading, 3)  # not the 4 s of a block sent again
    finally:
        await reader.aclose()
        await gateway.live.aclose()
        await gateway.redis.aclose()
