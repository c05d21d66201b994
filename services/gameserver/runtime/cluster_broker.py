"""FastStream's Redis Cluster broker on the store's cluster client.

FastStream's `RedisClusterBroker` makes a plain redis-py `RedisCluster` for its streams. That
client has the faults `eventstore.redis_client.SturdyCluster` mends: it closes itself whole,
connections in use included, at every fifth ``MOVED`` and in a pipeline's retry, routes keyed
commands keyless meanwhile, and asks a node for the keys of every ``XREADGROUP`` before it
sends it (``COMMAND GETKEYS``: a second round trip on every read of the rules service's
command streams). `SturdyClusterBroker` is FastStream's broker with a `SturdyCluster` instead,
made from the same options (and the store's cap on connections to a node).
"""

from __future__ import annotations

from typing import Any

from faststream.redis import RedisClusterBroker
from faststream.redis.configs.state import RedisClusterConnectionState

from eventstore.redis_client import CLUSTER_NODE_CONNECTIONS, SturdyCluster


class _SturdyClusterState(RedisClusterConnectionState):
    """FastStream's cluster connection state, whose client is a `SturdyCluster`."""

    __slots__ = ()

    async def connect(self) -> Any:
        if not self._connected:
            options = {k: v for k, v in self._options.items() if v is not None}
            options.setdefault("max_connections", CLUSTER_NODE_CONNECTIONS)
            self._client = SturdyCluster(**options)
            self._connected = True
        return self._client


class SturdyClusterBroker(RedisClusterBroker):
    """FastStream's `RedisClusterBroker` on a `SturdyCluster`."""

    def _make_connection_state(
        self, connection_options: dict[str, Any], kwargs: dict[str, Any]
    ) -> Any:
        return _SturdyClusterState(connection_options)
