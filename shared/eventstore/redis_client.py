"""Redis clients for a URL: a plain `Redis`, or a `RedisCluster` when the URL names a cluster.

``redis+cluster://host:port/`` (or ``rediss+cluster://`` for TLS) names a Redis Cluster by any
one of its nodes; the client discovers the others and routes every command to the master of its
key's hash slot. Every key of a game carries the game's partition as a hash tag (see
`eventstore.keys`), so everything one command touches lives on one shard.

```python
redis = redis_client(settings.redis_url)      # Redis or RedisCluster, bytes replies
```
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")


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
    """An asyncio client for ``url`` returning bytes: `RedisCluster` for a cluster URL,
    `Redis` otherwise (typed loosely: the two share their command methods, not a base)."""
    if is_cluster_url(url):
        # A cluster has one database: a path (/0) is accepted and dropped.
        return RedisCluster.from_url(
            urlunsplit(urlsplit(plain_url(url))._replace(path="")), **kwargs
        )
    return Redis.from_url(url, **kwargs)


def is_cluster(client: Any) -> bool:
    """Whether ``client`` talks to a Redis Cluster."""
    return isinstance(client, RedisCluster)
