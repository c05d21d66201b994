"""Event store for Renature games on Redis Streams.

One stream per game (entry id ``0-<version>``), atomic conditional and idempotent appends via
one Lua script, and per-partition feeds that projectors consume with consumer groups. The key
layout and the append algorithm are described in docs/event-store.md.
"""

from eventstore.api import EventStore
from eventstore.durability import (
    DEFAULT_DURABILITY,
    Durability,
    DurabilityStatus,
    parse_durability,
)
from eventstore.keys import (
    DEFAULT_COMMAND_PARTITIONS,
    DEFAULT_PARTITIONS,
    DEFAULT_PREFIX,
    CommandPartitions,
    KeyLayout,
    partition_of,
)
from eventstore.redis_store import (
    DEFAULT_OUTCOME_TTL_SECONDS,
    DEFAULT_PAGE_SIZE,
    MAX_VERSION,
    RedisEventStore,
)
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
)

__all__ = [
    "DEFAULT_COMMAND_PARTITIONS",
    "DEFAULT_DURABILITY",
    "DEFAULT_OUTCOME_TTL_SECONDS",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_PARTITIONS",
    "DEFAULT_PREFIX",
    "MAX_VERSION",
    "AppendRequest",
    "AppendResult",
    "Appended",
    "CommandPartitions",
    "Conflict",
    "CorruptStreamError",
    "Duplicate",
    "Durability",
    "DurabilityStatus",
    "EventStore",
    "FeedEntry",
    "KeyLayout",
    "NotDurableError",
    "RedisEventStore",
    "Settlement",
    "StoreError",
    "StoreUnavailableError",
    "StoredEvent",
    "parse_durability",
    "partition_of",
]
