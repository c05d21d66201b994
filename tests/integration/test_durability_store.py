"""The event store's durability promises, on a real Redis.

- Appends check content, not only the count: a batch whose ``prev_hash`` is not the stored last
  hash is a `Conflict` and writes nothing, also when the version matches (a stream that lost
  events and was refilled to the same version by other commands is another history).
- Every stored event carries its hash (stream entry and feed entry).
- The durability modes: ``always`` is checked against the server's configuration, ``replica``
  refuses to count a write as done until a replica has it (`NotDurableError` without one,
  success with a real replica started here), ``everysec`` states its loss window.
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest
import redis.asyncio as aioredis

from devkit.redis_server import RedisServer
from eventstore import (
    Appended,
    AppendRequest,
    Conflict,
    Duplicate,
    NotDurableError,
    RedisEventStore,
    StoredEvent,
)
from eventstore.durability import Durability, parse_durability, supports_waitaof

pytestmark = pytest.mark.redis

GAME = "game-1"


def chain(names: list[str], prev: str = "") -> tuple[list[bytes], list[str]]:
    """Events and their hashes, each hash covering the previous one (like the core's chain)."""
    data, hashes = [], []
    for name in names:
        event = f'{{"type":"{name}","prev":"{prev}"}}'.encode()
        prev = hashlib.sha256(event).hexdigest()
        data.append(event)
        hashes.append(prev)
    return data, hashes


def request(
    command_id: str, expected: int, names: list[str], prev: str, game: str = GAME
) -> AppendRequest:
    data, hashes = chain(names, prev)
    return AppendRequest(
        game, command_id, expected, data, b"ok:" + command_id.encode(), None, prev, hashes
    )


class TestHashLinkedAppends:
    async def test_each_stored_event_carries_its_hash(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        data, hashes = chain(["a", "b"])
        (result,) = await store.append_many(
            [AppendRequest(GAME, "c1", 0, data, b"r", b"meta", "", hashes)]
        )
        assert result == Appended(1, 2)
        assert await store.read(GAME) == [
            StoredEvent(1, data[0], b"meta", hashes[0]),
            StoredEvent(2, data[1], None, hashes[1]),
        ]
        await store.ensure_group(store.partition_of(GAME), "g")
        feed = await store.read_group("g", "c", [store.partition_of(GAME)])
        assert [(entry.version, entry.hash) for entry in feed] == [(1, hashes[0]), (2, hashes[1])]

    async def test_matching_prev_hash_appends(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        first = request("c1", 0, ["a"], "")
        assert (await store.append_many([first]))[0] == Appended(1, 1)
        assert first.hashes is not None
        second = request("c2", 1, ["b", "c"], first.hashes[-1])
        assert (await store.append_many([second]))[0] == Appended(2, 3)

    async def test_same_version_other_history_is_a_conflict(self, redis: aioredis.Redis) -> None:
        """The fork of the power cut: a writer decided on a history that was lost; the stream
        was refilled to the same version by other commands. Its append must not land."""
        store = RedisEventStore(redis)
        lost = request("lost", 0, ["a"], "")  # the cached history a rules instance decided on
        assert lost.hashes is not None
        survivor = request("other", 0, ["x"], "")  # what the stream holds now, same version
        assert survivor.hashes is not None
        assert (await store.append_many([survivor]))[0] == Appended(1, 1)

        stale = request("stale", 1, ["b"], lost.hashes[-1])
        (result,) = await store.append_many([stale])
        assert result == Conflict(expected=1, actual=1)
        assert isinstance(result, Conflict)
        assert result.actual_hash == survivor.hashes[-1]
        assert await store.version(GAME) == 1
        assert [event.hash for event in await store.read(GAME)] == survivor.hashes
        assert await store.get_outcome(GAME, "stale") is None  # nothing recorded either

    async def test_prev_hash_on_an_empty_stream_must_be_empty(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        (result,) = await store.append_many([request("c1", 0, ["a"], "not-empty")])
        assert result == Conflict(expected=0, actual=0)
        assert await store.version(GAME) == 0

    async def test_version_conflict_reports_the_stored_hash(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        first = request("c1", 0, ["a", "b"], "")
        assert first.hashes is not None
        await store.append_many([first])
        (result,) = await store.append_many([request("c2", 1, ["c"], first.hashes[0])])
        assert result == Conflict(expected=1, actual=2)
        assert isinstance(result, Conflict)
        assert result.actual_hash == first.hashes[-1]

    async def test_a_retried_command_is_still_a_duplicate(self, redis: aioredis.Redis) -> None:
        """Idempotency comes first: the retry carries a stale version and hash."""
        store = RedisEventStore(redis)
        first = request("c1", 0, ["a"], "")
        assert first.hashes is not None
        await store.append_many([first, request("c2", 1, ["b"], first.hashes[0])])
        (result,) = await store.append_many([first])
        assert result == Duplicate(b"ok:c1")

    async def test_without_prev_hash_only_the_version_is_checked(
        self, redis: aioredis.Redis
    ) -> None:
        store = RedisEventStore(redis)
        await store.append_many([request("c1", 0, ["a"], "")])
        plain = await store.append(
            GAME, command_id="c2", expected_version=1, events=[b"x"], outcome=b""
        )
        assert plain == Appended(2, 2)
        assert (await store.read(GAME, 1))[0].hash is None

    async def test_a_hash_per_event(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        with pytest.raises(ValueError, match="one per event"):
            await store.append_many(
                [AppendRequest(GAME, "c", 0, [b"a", b"b"], b"", None, "", ["h"])]
            )

    async def test_racing_writers_on_one_history_one_wins(self, redis: aioredis.Redis) -> None:
        """Many writers decided on the same state: exactly one lands, the rest conflict."""
        store = RedisEventStore(redis)
        first = request("c0", 0, ["a"], "")
        assert first.hashes is not None
        await store.append_many([first])
        results = await asyncio.gather(
            *(
                store.append_many([request(f"w{i}", 1, [f"b{i}"], first.hashes[0])])
                for i in range(20)
            )
        )
        landed = [r for (r,) in results if isinstance(r, Appended)]
        assert landed == [Appended(2, 2)]
        assert await store.version(GAME) == 2


class TestDurabilityModes:
    def test_modes_are_named(self) -> None:
        assert parse_durability("ALWAYS") is Durability.ALWAYS
        assert parse_durability("replica") is Durability.REPLICA
        with pytest.raises(ValueError, match="always, replica, everysec"):
            parse_durability("sometimes")

    def test_waitaof_needs_redis_7_2(self) -> None:
        assert not supports_waitaof("7.0.15")
        assert supports_waitaof("7.2.4")
        assert supports_waitaof("8.0.0")

    async def test_always_is_checked_against_the_server(self) -> None:
        with RedisServer(appendonly=True, appendfsync="always") as durable:
            client = aioredis.Redis.from_url(durable.url)
            try:
                status = await RedisEventStore(client, durability="always").check_durability()
                assert status.ok, status.statement
                await client.config_set("appendfsync", "everysec")
                status = await RedisEventStore(client, durability="always").check_durability()
                assert not status.ok
                assert "appendfsync always" in status.statement
                status = await RedisEventStore(client, durability="everysec").check_durability()
                assert status.ok
                assert "loss window" in status.statement
            finally:
                await client.aclose()

    async def test_replica_mode_refuses_without_a_replica(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis, durability="replica", wait_timeout_ms=100)
        status = await store.check_durability()
        assert not status.ok
        with pytest.raises(NotDurableError, match="0 of 1 replica"):
            await store.append_many([request("c1", 0, ["a"], "")])
        # The write itself was made: a retry answers it once a replica has it, never twice.
        assert await store.version(GAME) == 1
        with pytest.raises(NotDurableError):
            await store.record_outcome(GAME, "rejected-1", b"no")

    async def test_replica_mode_with_a_replica(self) -> None:
        with RedisServer() as primary, RedisServer() as replica:
            replica_client = aioredis.Redis.from_url(replica.url)
            client = aioredis.Redis.from_url(primary.url)
            try:
                await replica_client.execute_command("REPLICAOF", "127.0.0.1", primary.port)  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
                for _ in range(100):  # wait for the link (bounded)
                    link = (await replica_client.info("replication")).get("master_link_status")
                    if link == "up":
                        break
                    await asyncio.sleep(0.05)
                store = RedisEventStore(client, durability="replica", wait_timeout_ms=2000)
                assert (await store.check_durability()).ok
                first = request("c1", 0, ["a"], "")
                assert (await store.append_many([first]))[0] == Appended(1, 1)
                # Acknowledged means the replica has it.
                assert await replica_client.xlen(store.layout.game_key(GAME)) == 1
                assert (await store.append_many([first]))[0] == Duplicate(b"ok:c1")
                assert await store.record_outcome(GAME, "r1", b"no") is None
                assert await replica_client.get(store.layout.command_key(GAME, "r1")) == b"no"
            finally:
                await replica_client.aclose()
                await client.aclose()
