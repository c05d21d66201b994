"""A round trip to Redis as the services make it (`eventstore.redis_client`): `each_reply`
(each command's reply or its error, whether the commands went in a pipeline or one went alone),
`Lanes` (the same on connections kept for a hot path, `eventstore.lanes`) and
`PackedConnection`'s writes (no task for a write that cannot wait; every timeout kept)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from eventstore.lanes import Lanes
from eventstore.redis_client import blocking_pool, each_reply, redis_client

pytestmark = pytest.mark.redis

UNKNOWN_SHA = "0" * 40


RoundTrip = Callable[[aioredis.Redis], Callable[[list[tuple[Any, ...]]], Awaitable[list[Any]]]]


def as_a_function(redis: aioredis.Redis) -> Callable[[list[tuple[Any, ...]]], Awaitable[list[Any]]]:
    return lambda commands: each_reply(redis, commands)


def on_kept_connections(
    redis: aioredis.Redis,
) -> Callable[[list[tuple[Any, ...]]], Awaitable[list[Any]]]:
    return Lanes(redis).each_reply


@pytest.mark.parametrize("round_trip", [as_a_function, on_kept_connections])
async def test_one_command_alone_answers_as_a_pipeline_of_one_would(
    redis: aioredis.Redis, round_trip: RoundTrip
) -> None:
    each = round_trip(redis)
    sha = await redis.script_load("return redis.call('INCR', KEYS[1])")
    assert await each([("EVALSHA", sha, 1, "n")]) == [1]
    assert await each([("EVALSHA", sha, 1, "n"), ("EVALSHA", sha, 1, "n")]) == [2, 3]
    (lost,) = await each([("EVALSHA", UNKNOWN_SHA, 1, "n")])
    assert isinstance(lost, NoScriptError)  # a value, not raised, as from the pipeline:
    lost, done = await each([("EVALSHA", UNKNOWN_SHA, 1, "n"), ("INCR", "n")])
    assert isinstance(lost, NoScriptError)
    assert done == 4
    (refused,) = await each([("XADD", "s", "0-0", "f", "v")])
    assert isinstance(refused, ResponseError)
    assert await redis.exists("s") == 0
    (entry,) = await each([("XADD", "s", "MAXLEN", "~", 10, "*", "f", "v")])
    stored = await redis.xrange("s")
    assert stored is not None
    assert [entry_id for entry_id, _ in stored] == [entry]
    # the client's reply callbacks: a group read parsed as the client's own method parses it
    await redis.xgroup_create("s", "g", id="0")
    (read,) = await each([("XREADGROUP", "GROUP", "g", "c", "COUNT", 5, "STREAMS", "s", ">")])
    assert read == [[b"s", stored]]


async def test_kept_connections_answer_their_own_commands_however_many_run_at_once(
    redis: aioredis.Redis,
) -> None:
    lanes = Lanes(redis)
    counts = await asyncio.gather(*(lanes.each_reply([("INCR", f"k{i % 7}")]) for i in range(70)))
    assert sorted(count for (count,) in counts) == sorted(list(range(1, 11)) * 7)
    assert [await redis.get(f"k{i}") for i in range(7)] == [b"10"] * 7
    assert await lanes.one("GET", "k3") == b"10"
    with pytest.raises(ResponseError):
        await lanes.one("XADD", "s", "0-0", "f", "v")  # one command's error is raised


async def test_kept_connections_never_starve_the_clients_pool(redis_url: str) -> None:
    """A pool of three connections, lanes that may keep two: however many commands run at
    once on the lanes, the client's own commands still find a connection (with the lanes
    keeping every connection they took, a burst would leave the pool none: the client's
    commands would wait out the pool's timeout and fail)."""
    pool = blocking_pool(redis_url, max_connections=3, timeout=1.0)
    client = aioredis.Redis(connection_pool=pool)
    lanes = Lanes(client, kept=2)
    try:
        counts = await asyncio.gather(*(lanes.each_reply([("INCR", "n")]) for _ in range(30)))
        assert sorted(count for (count,) in counts) == list(range(1, 31))
        assert len(lanes.idle) == 2
        assert await client.get("n") == b"30"
        assert await lanes.one("INCR", "n") == 31
    finally:
        await client.aclose()
        await pool.disconnect()


async def test_a_kept_connection_cut_under_a_read_answers_the_next_command_alone(
    redis: aioredis.Redis,
) -> None:
    """A read cancelled while Redis holds it (a blocking read, a service stopping): the
    kept connection must not hand its late reply to the next command."""
    lanes = Lanes(redis)
    await redis.xadd("s", {"f": "v"})
    waiting = asyncio.create_task(lanes.one("XREAD", "BLOCK", 5000, "STREAMS", "s", "$"))
    await asyncio.sleep(0.2)  # sent, and blocked in Redis
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await redis.xadd("s", {"f": "late"})  # what the cut read would have answered
    assert await lanes.one("PING") is True
    assert await lanes.one("GET", "nothing") is None


async def test_a_kept_connection_the_server_closed_is_opened_again(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """``CLIENT KILL`` (or a restarted Redis): the next command goes on a new connection,
    retried as the client retries (its `Retry`), and nothing is sent twice."""
    client = redis_client(redis_url)
    lanes = Lanes(client)
    try:
        (first,) = await lanes.each_reply([("CLIENT", "ID")])
        assert await redis.client_kill_filter(_id=first) == 1
        assert await lanes.each_reply([("INCR", "n")]) == [1]
        (second,) = await lanes.each_reply([("CLIENT", "ID")])
        assert second != first
        assert len(lanes.idle) == 1  # the same kept connection, opened again
        assert await redis.get("n") == b"1"
    finally:
        await client.aclose()


async def test_closing_the_client_closes_its_kept_connections(redis_url: str) -> None:
    client = redis_client(redis_url)
    lanes = Lanes(client)
    await asyncio.gather(*(lanes.each_reply([("PING",)]) for _ in range(3)))
    kept = lanes.idle
    assert kept
    assert all(connection.is_connected for connection in kept)
    await client.aclose()
    assert not any(connection.is_connected for connection in kept)


async def test_a_lost_connection_is_raised_alone_or_in_a_pipeline() -> None:
    """Nothing listens on the port: both ways raise (a caller fails every command of it)."""
    gone = aioredis.Redis(port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    lanes = Lanes(gone)
    try:
        for commands in ([("PING",)], [("PING",), ("PING",)]):
            with pytest.raises(RedisConnectionError):
                await each_reply(gone, commands)
            with pytest.raises(RedisConnectionError):
                await lanes.each_reply(commands)
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
        with pytest.raises(RedisTimeoutError, match="reading"):  # kept: timed, not retried
            async with asyncio.timeout(10):
                await Lanes(client).one("PING")
        assert timed_writes == []
        with pytest.raises(RedisTimeoutError, match="writing"):
            async with asyncio.timeout(10):
                await client.set("big", b"z" * (16 << 20))
        assert timed_writes == [0.5]
    finally:
        await client.aclose()
