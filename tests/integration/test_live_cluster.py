"""The live channels on a real Redis Cluster: the worker's feed reader has its own cluster
client (the gateway's nodes and credentials, a socket timeout longer than the block), and a
channel follows a game through it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import cast

import pytest

from devkit.redis_cluster import (  # noqa: F401 (the fixtures redis_cluster and cluster_redis)
    RedisCluster,
    cluster_redis_fixture,
    redis_cluster_fixture,
)
from eventstore import AppendRequest, RedisEventStore
from gameserver.gateway.app import create_app
from gameserver.gateway.live_hub import READ_BLOCK_MS, SOCKET_MARGIN_S, live_reader
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
        stream = follow(gateway, "live-c", 0, "renature")
        first = await asyncio.wait_for(anext(stream), 10)
        assert isinstance(first, e.GameCreated)
        events, _ = execute(replay(events), c.JoinGame(seat=0, name="ann"))
        request = AppendRequest("live-c", "join", 1, [e.encode(ev) for ev in events], b"ok")
        await store.append_many([request])  # appended while the channel follows: the feed
        second = await asyncio.wait_for(anext(stream), 10)
        assert second.version == 2
        await cast("AsyncGenerator[e.Event, None]", stream).aclose()
    finally:
        await reader.aclose()
        await gateway.live.aclose()
        await gateway.redis.aclose()
