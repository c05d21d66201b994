"""A round trip to Redis as the services make it (`eventstore.redis_client`): `each_reply`
(each command's reply or its error, whether the commands went in a pipeline or one went alone)
and `PackedConnection`'s writes (no task for a write that cannot wait; every timeout kept)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable
from typing import Any, cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from eventstore.redis_client import each_reply, redis_client

pytestmark = pytest.mark.redis

UNKNOWN_SHA = "0" * 40


async def test_one_command_alone_answers_as_a_pipeline_of_one_would(
    redis: aioredis.Redis,
) -> None:
    sha = await redis.script_load("return redis.call('INCR', KEYS[1])")
    assert await each_reply(redis, [("EVALSHA", sha, 1, "n")]) == [1]
    assert await each_reply(redis, [("EVALSHA", sha, 1, "n"), ("EVALSHA", sha, 1, "n")]) == [2, 3]
    (lost,) = await each_reply(redis, [("EVALSHA", UNKNOWN_SHA, 1, "n")])
    assert isinstance(lost, NoScriptError)  # a value, not raised, as from the pipeline:
    lost, done = await each_reply(redis, [("EVALSHA", UNKNOWN_SHA, 1, "n"), ("INCR", "n")])
    assert isinstance(lost, NoScriptError)
    assert done == 4
    (refused,) = await each_reply(redis, [("XADD", "s", "0-0", "f", "v")])
    assert isinstance(refused, ResponseError)
    assert await redis.exists("s") == 0
    (entry,) = await each_reply(redis, [("XADD", "s", "MAXLEN", "~", 10, "*", "f", "v")])
    stored = await redis.xrange("s")
    assert stored is not None
    assert [entry_id for entry_id, _ in stored] == [entry]


async def test_a_lost_connection_is_raised_alone_or_in_a_pipeline() -> None:
    """Nothing listens on the port: both ways raise (a caller fails every command of it)."""
    gone = aioredis.Redis(port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    try:
        for commands in ([("PING",)], [("PING",), ("PING",)]):
            with pytest.raises(RedisConnectionError):
                await each_reply(gone, commands)
    finally:
        await gone.aclose()


@pytest.fixture
def timed_writes(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The timeouts of the writes redis-py made under ``asyncio.wait_for`` (a task each)."""
    timeouts: list[float] = []
    wait_for = asyncio.wait_for

    def counted(awaitable: Awaitable[Any], timeout: float | None) -> Any:
        timeouts.append(timeout or 0.0)
        return wait_for(awaitable, timeout)

    monkeypatch.setattr(asyncio, "wait_for", counted)  # the module redis-py's connection uses
    return timeouts


async def test_a_write_that_cannot_wait_goes_without_a_task_and_a_large_one_timed(
    redis_url: str, timed_writes: list[float]
) -> None:
    client = redis_client(redis_url, socket_timeout=5)
    try:
        await client.ping()  # connected (its handshake may be timed)
        timed_writes.clear()
        assert await client.set("small", b"x" * 100)
        assert await client.get("small") == b"x" * 100
        assert timed_writes == []
        big = b"y" * (2 << 20)  # past the socket buffer's high water mark
        assert await client.set("big", big)
        assert timed_writes == [5]
        assert await client.get("big") == big
    finally:
        await client.aclose()


@pytest.fixture
async def silent_server() -> AsyncIterator[int]:
    """A port on loopback that accepts connections and never reads or answers (a small
    receive buffer: a write of a few MiB fills what the kernel holds)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        cast(asyncio.ReadTransport, writer.transport).pause_reading()
        held.append(writer)

    listening = socket.socket()
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once
    listening.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(hold, sock=listening)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_server_that_never_answers_still_times_out_reads_and_full_writes(
    silent_server: int, timed_writes: list[float]
) -> None:
    """The untimed write is only the write's: the read after it keeps the socket timeout,
    and a write that fills the socket's buffers still times out."""
    client = redis_client(
        f"redis://127.0.0.1:{silent_server}",
        socket_timeout=0.5,
        # No handshake (HELLO, CLIENT SETINFO) and no health check's PING: the command is the
        # connection's first write.
        protocol=2,
        driver_info=None,
        health_check_interval=0,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        with pytest.raises(RedisTimeoutError, match="reading"):
            async with asyncio.timeout(10):  # not wait_for: the fixture counts those
                await client.ping()
        assert timed_writes == []
        with pytest.raises(RedisTimeoutError, match="writing"):
            async with asyncio.timeout(10):
                await client.set("big", b"z" * (16 << 20))
        assert timed_writes == [0.5]
    finally:
        await client.aclose()
