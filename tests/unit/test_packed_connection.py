"""`eventstore.redis_client.PackedConnection`: commands packed by hiredis, byte for byte what
redis-py's own asyncio connection sends, and the same refusal of what Redis cannot carry."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio import Connection
from redis.exceptions import DataError

from eventstore.redis_client import PackedConnection, blocking_pool, redis_client

ARGUMENTS = st.one_of(
    st.binary(max_size=9000),  # beyond redis-py's chunking cutoff (6,000 bytes)
    st.text(max_size=200),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)


def sent(connection: Connection, *args: Any) -> bytes:
    return b"".join(connection.pack_command(*args))


@given(
    name=st.sampled_from(["EVALSHA", "XADD", "CLIENT LIST", b"SET", b"OBJECT ENCODING"]),
    args=st.lists(ARGUMENTS, max_size=20),
)
def test_the_bytes_sent_are_redis_pys_own(name: str | bytes, args: list[Any]) -> None:
    assert sent(PackedConnection(), name, *args) == sent(Connection(), name, *args)


def test_many_commands_at_once_are_redis_pys_own_too() -> None:
    commands = [("EVALSHA", "abc", 2, "k1", b"k2", 1, b"x" * 7000), ("PUBLISH", "c", "é")]
    packed = b"".join(PackedConnection().pack_commands(commands))
    assert packed == b"".join(Connection().pack_commands(commands))


@pytest.mark.parametrize("bad", [True, None, object()])
def test_what_redis_cannot_carry_is_a_data_error(bad: object) -> None:
    with pytest.raises(DataError):
        PackedConnection().pack_command("SET", "key", bad)


def test_the_services_clients_pack_with_it() -> None:
    url = "redis://127.0.0.1:1/0"  # never connected to
    assert redis_client(url).connection_pool.connection_class is PackedConnection
    assert blocking_pool(url, max_connections=2, timeout=1).connection_class is PackedConnection
    # A URL that names its own transport keeps it (a socket file, TLS).
    assert redis_client("unix:///tmp/redis.sock").connection_pool.connection_class is not (
        PackedConnection
    )
