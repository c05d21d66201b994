"""Contract tests of the event store, run against every back end: a real Redis and memory.

`TestEventStoreContract` only uses the `EventStore` protocol through the ``store`` fixture, whose
params are the back ends (`RedisEventStore`, `MemoryEventStore`); a new back end is added there
and must pass the same suite. `TestRedisLayout` checks what is specific to Redis: entry ids, key
layout, cluster slots, TTLs.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import msgspec
import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from devkit.redis_cluster import (  # noqa: F401 (the fixtures redis_cluster and cluster_redis)
    cluster_redis_fixture,
    redis_cluster_fixture,
)
from devkit.waiting import eventually
from eventstore import (
    MAX_VERSION,
    Appended,
    AppendRequest,
    Conflict,
    Duplicate,
    EventStore,
    FeedEntry,
    KeyLayout,
    RedisEventStore,
    StoredEvent,
    StoreError,
    partition_of,
)
from eventstore.memory_store import MemoryEventStore
from support.reads import blocked_reads

GAME = "game-1"  # partition 12 of 16: crc32(b"game-1") % 16


async def entries_of(redis: aioredis.Redis, key: str) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """A stream's entries as this client returns them (bytes)."""
    return cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(key))


def events(*names: str) -> list[bytes]:
    """Encoded events, as the rules service would produce them."""
    return [msgspec.json.encode({"type": name}) for name in names]


def chained(*names: str, prev: str = "") -> tuple[list[bytes], list[str]]:
    """Events and their chain hashes, each hash covering the one before (as the core's)."""
    data, hashes = [], []
    for name in names:
        event = msgspec.json.encode({"type": name, "prev": prev})
        prev = hashlib.sha256(event).hexdigest()
        data.append(event)
        hashes.append(prev)
    return data, hashes


def outcome(text: str) -> bytes:
    return msgspec.json.encode({"reply": text})


@pytest.fixture(
    params=[
        pytest.param("redis", marks=pytest.mark.redis),
        "memory",
        pytest.param("cluster", marks=pytest.mark.redis),
    ]
)
def store(request: pytest.FixtureRequest) -> EventStore:
    """Every back end of the contract; add new ones to ``params``."""
    if request.param == "redis":
        # Only the Redis back end needs a server (an empty one: the fixture flushes it).
        return RedisEventStore(request.getfixturevalue("redis"))
    if request.param == "memory":
        return MemoryEventStore()
    if request.param == "cluster":  # three masters with a replica each; writes wait for one
        return RedisEventStore(request.getfixturevalue("cluster_redis"), durability="replica")
    raise AssertionError(f"unknown back end {request.param}")


async def feed_of(store: EventStore, group: str = "check") -> list[FeedEntry]:
    """Everything in all partition feeds, read through a fresh consumer group."""
    for p in store.partitions():
        await store.ensure_group(p, group)
    found: list[FeedEntry] = []
    while batch := await store.read_group(group, "reader", store.partitions(), count=1000):
        found.extend(batch)
    return found


class TestEventStoreContract:
    async def test_new_game_is_empty(self, store: EventStore) -> None:
        assert await store.version(GAME) == 0
        assert not await store.exists(GAME)
        assert await store.read(GAME) == []
        assert await store.last(GAME) is None
        assert await store.list_games() == []

    async def test_append_to_new_game_gives_versions_1_to_n(self, store: EventStore) -> None:
        result = await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b", "c"), outcome=b"ok"
        )
        assert result == Appended(first_version=1, last_version=3)
        assert result.count == 3
        assert await store.version(GAME) == 3
        assert await store.exists(GAME)
        assert await store.list_games() == [GAME]

    async def test_read_returns_bytes_unchanged_in_order_with_meta_on_first_only(
        self, store: EventStore
    ) -> None:
        odd = [b"\x00\xff\x00binary", b"", "ünïcødé".encode()]
        await store.append(
            GAME, command_id="c1", expected_version=0, events=odd, outcome=b"1", batch_meta=b"m1"
        )
        await store.append(
            GAME, command_id="c2", expected_version=3, events=events("d", "e"), outcome=b"2"
        )
        await store.append(
            GAME,
            command_id="c3",
            expected_version=5,
            events=events("f"),
            outcome=b"3",
            batch_meta=b"m3",
        )
        stored = await store.read(GAME)
        assert await store.last(GAME) == stored[-1]
        assert [e.data for e in stored] == [*odd, *events("d", "e", "f")]
        assert [e.version for e in stored] == [1, 2, 3, 4, 5, 6]
        assert [e.meta for e in stored] == [b"m1", None, None, None, None, b"m3"]
        assert all(isinstance(e, StoredEvent) for e in stored)

    async def test_read_after_version_and_limit(self, store: EventStore) -> None:
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events(*"abcdef"), outcome=b"ok"
        )
        assert [e.version for e in await store.read(GAME, after_version=2, limit=2)] == [3, 4]
        assert [e.version for e in await store.read(GAME, after_version=4)] == [5, 6]
        assert await store.read(GAME, after_version=6) == []
        assert await store.read(GAME, limit=0) == []

    async def test_nothing_comes_after_the_last_possible_version(self, store: EventStore) -> None:
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events(*"ab"), outcome=b"ok"
        )
        # A version is the sequence part of an entry id: beyond it there is no id to ask for.
        assert await store.read(GAME, after_version=MAX_VERSION) == []
        assert await store.read(GAME, after_version=2**70) == []
        pages = await store.read_many([(GAME, 2**64), (GAME, 1)])
        assert [[e.version for e in page] for page in pages] == [[], [2]]

    async def test_stale_expected_version_conflicts_and_writes_nothing(
        self, store: EventStore
    ) -> None:
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"1"
        )
        feed_before = await feed_of(store, "before")

        result = await store.append(
            GAME, command_id="c2", expected_version=1, events=events("x"), outcome=b"2"
        )

        assert result == Conflict(expected=1, actual=2)
        assert [e.data for e in await store.read(GAME)] == events("a", "b")
        assert await store.get_outcome(GAME, "c2") is None  # a conflict is not an outcome
        assert len(feed_before) == 2
        assert [(f.game_id, f.version) for f in await feed_of(store, "after")] == [
            (GAME, 1),
            (GAME, 2),
        ]

    async def test_expected_version_ahead_of_game_conflicts(self, store: EventStore) -> None:
        result = await store.append(
            GAME, command_id="c1", expected_version=5, events=events("a"), outcome=b"1"
        )
        assert result == Conflict(expected=5, actual=0)
        assert not await store.exists(GAME)
        assert await store.list_games() == []

    async def test_duplicate_command_returns_original_outcome_and_appends_nothing(
        self, store: EventStore
    ) -> None:
        accepted = outcome("accepted 1..2")
        first = await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=accepted
        )
        assert first == Appended(1, 2)

        same = await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"other"
        )
        at_current = await store.append(
            GAME, command_id="c1", expected_version=2, events=events("z"), outcome=b"other"
        )

        assert same == Duplicate(accepted)
        assert at_current == Duplicate(accepted)
        assert await store.version(GAME) == 2
        assert await store.get_outcome(GAME, "c1") == accepted
        assert len(await feed_of(store)) == 2

    async def test_append_many_appends_each_request_as_append_would(
        self, store: EventStore
    ) -> None:
        await store.append(
            "other", command_id="o1", expected_version=0, events=events("x"), outcome=b"o1"
        )
        results = await store.append_many(
            [
                AppendRequest(GAME, "c1", 0, events("a", "b"), b"r1", b"meta1"),
                AppendRequest("other", "o2", 0, events("y"), b"r2"),  # stale: conflict
                AppendRequest("third", "t1", 0, events("t"), b"r3"),
                AppendRequest(GAME, "c2", 2, events("c"), b"r4"),  # after c1 in the same trip
                AppendRequest("other", "o1", 1, events("z"), b"again"),  # a retried command
            ]
        )
        assert results == [
            Appended(1, 2),
            Conflict(expected=0, actual=1),
            Appended(1, 1),
            Appended(3, 3),
            Duplicate(b"o1"),
        ]
        stored = await store.read(GAME)
        assert [event.data for event in stored] == events("a", "b", "c")
        assert [event.meta for event in stored] == [b"meta1", None, None]
        assert await store.version("other") == 1
        assert await store.get_outcome(GAME, "c2") == b"r4"
        assert await store.get_outcome("other", "o2") is None
        assert len(await feed_of(store)) == 5
        assert await store.append_many([]) == []

    async def test_append_many_conflict_does_not_let_a_chained_request_through(
        self, store: EventStore
    ) -> None:
        """A request expecting the version its predecessor would have left is refused when the
        predecessor lost its race: nothing is appended on a state that never existed."""
        await store.append(
            GAME, command_id="x", expected_version=0, events=events("x"), outcome=b"x"
        )
        results = await store.append_many(
            [
                AppendRequest(GAME, "c1", 0, events("a", "b"), b"r1"),
                AppendRequest(GAME, "c2", 2, events("c"), b"r2"),
            ]
        )
        assert results == [Conflict(expected=0, actual=1), Conflict(expected=2, actual=1)]
        assert await store.version(GAME) == 1

    async def test_append_many_checks_its_input_before_writing(self, store: EventStore) -> None:
        with pytest.raises(ValueError, match="non-empty sequence of events"):
            await store.append_many(
                [
                    AppendRequest(GAME, "c1", 0, events("a"), b"r1"),
                    AppendRequest(GAME, "c2", 1, [], b"r2"),
                ]
            )
        assert await store.version(GAME) == 0

    async def test_read_many_reads_each_game_after_its_version(self, store: EventStore) -> None:
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"1"
        )
        await store.append(
            "other", command_id="c1", expected_version=0, events=events("x"), outcome=b"1"
        )
        pages = await store.read_many([(GAME, 1), ("other", 0), ("missing", 0), (GAME, 2)])
        assert [[(ev.version, ev.data) for ev in page] for page in pages] == [
            [(2, events("b")[0])],
            [(1, events("x")[0])],
            [],
            [],
        ]
        assert pages[1] == await store.read("other")
        assert await store.read_many([]) == []

    async def test_command_ids_are_per_game(self, store: EventStore) -> None:
        for game in ("game-1", "game-2"):
            result = await store.append(
                game, command_id="c1", expected_version=0, events=events("a"), outcome=b"ok"
            )
            assert result == Appended(1, 1)

    async def test_record_outcome_of_rejection_is_idempotent(self, store: EventStore) -> None:
        rejected = outcome("rejected: not your turn")
        assert await store.record_outcome(GAME, "c1", rejected) is None
        assert await store.record_outcome(GAME, "c1", outcome("other")) == Duplicate(rejected)
        assert await store.get_outcome(GAME, "c1") == rejected
        # The command can no longer append: a retry gets the rejection back.
        retried = await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"ok"
        )
        assert retried == Duplicate(rejected)
        assert not await store.exists(GAME)

    async def test_record_outcome_after_append_returns_the_append_outcome(
        self, store: EventStore
    ) -> None:
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"acc"
        )
        assert await store.record_outcome(GAME, "c1", b"rej") == Duplicate(b"acc")

    async def test_concurrent_appenders_exactly_one_wins(self, store: EventStore) -> None:
        n = 50
        results = await asyncio.gather(
            *(
                store.append(
                    GAME,
                    command_id=f"c{i}",
                    expected_version=0,
                    events=events(f"w{i}-1", f"w{i}-2"),
                    outcome=f"winner {i}".encode(),
                )
                for i in range(n)
            )
        )
        winners = [i for i, r in enumerate(results) if isinstance(r, Appended)]
        assert len(winners) == 1
        assert [r for r in results if not isinstance(r, Appended)] == [Conflict(0, 2)] * (n - 1)
        w = winners[0]
        assert [e.data for e in await store.read(GAME)] == events(f"w{w}-1", f"w{w}-2")
        assert len(await feed_of(store)) == 2

    async def test_racing_writers_with_retries_never_fork(self, store: EventStore) -> None:
        writers, commands = 8, 5

        async def writer(w: int) -> None:
            for c in range(commands):
                while True:
                    at = await store.version(GAME)
                    result = await store.append(
                        GAME,
                        command_id=f"w{w}c{c}",
                        expected_version=at,
                        events=events(f"{w}.{c}.a", f"{w}.{c}.b"),
                        outcome=b"ok",
                    )
                    if not isinstance(result, Conflict):
                        break

        await asyncio.gather(*(writer(w) for w in range(writers)))
        stored = await store.read(GAME)
        assert [e.version for e in stored] == list(range(1, 2 * writers * commands + 1))
        pairs = [(stored[i].data, stored[i + 1].data) for i in range(0, len(stored), 2)]
        assert sorted(pairs) == sorted(
            (events(f"{w}.{c}.a")[0], events(f"{w}.{c}.b")[0])
            for w in range(writers)
            for c in range(commands)
        )

    async def test_feed_receives_every_event_with_game_and_version(self, store: EventStore) -> None:
        games = ["game-1", "g-alpha", "renature-42"]
        for game in games:
            await store.append(
                game, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"1"
            )
            await store.append(
                game, command_id="c2", expected_version=2, events=events("c"), outcome=b"2"
            )
        feed = await feed_of(store)
        for game in games:
            mine = [f for f in feed if f.game_id == game]
            assert [(f.version, f.data) for f in mine] == list(
                zip([1, 2, 3], events("a", "b", "c"), strict=True)
            )
            assert {f.partition for f in mine} == {store.partition_of(game)}
        assert sorted(await store.list_games()) == sorted(games)

    async def test_ensure_group_is_idempotent(self, store: EventStore) -> None:
        assert await store.ensure_group(0, "proj") is True
        assert await store.ensure_group(0, "proj") is False

    async def test_group_read_ack_and_autoclaim_from_crashed_consumer(
        self, store: EventStore
    ) -> None:
        p = store.partition_of(GAME)
        await store.ensure_group(p, "proj")
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b", "c"), outcome=b"1"
        )

        # "crashed" reads the first two entries and dies before acknowledging them.
        taken = await store.read_group("proj", "crashed", [p], count=2)
        assert [(f.game_id, f.version) for f in taken] == [(GAME, 1), (GAME, 2)]
        # "alive" reads and acknowledges the rest.
        rest = await store.read_group("proj", "alive", [p], count=10)
        assert [f.version for f in rest] == [3]
        assert await store.ack(p, "proj", [f.entry_id for f in rest]) == 1
        assert await store.read_group("proj", "alive", [p], count=10, block_ms=10) == []

        # Not idle long enough yet: nothing to claim.
        assert await store.autoclaim(p, "proj", "alive", min_idle_ms=60_000) == []
        await asyncio.sleep(0.05)  # deliberately idle past the 20 ms asked for below
        claimed = await store.autoclaim(p, "proj", "alive", min_idle_ms=20)
        assert [(f.entry_id, f.version, f.data) for f in claimed] == [
            (f.entry_id, f.version, f.data) for f in taken
        ]
        assert await store.ack(p, "proj", [f.entry_id for f in claimed]) == 2
        assert await store.autoclaim(p, "proj", "alive", min_idle_ms=0) == []
        assert await store.ack(p, "proj", []) == 0

    async def test_a_blocked_group_read_wakes_when_an_event_arrives(
        self, store: EventStore
    ) -> None:
        p = store.partition_of(GAME)
        await store.ensure_group(p, "proj")
        before = await blocked_reads(store)
        reader = asyncio.create_task(store.read_group("proj", "r", [p], block_ms=5_000))

        async def waiting() -> bool:
            return await blocked_reads(store) > before

        await eventually(waiting, "the read waiting for an entry")
        assert not reader.done()
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        taken = await asyncio.wait_for(reader, 5)
        assert [(f.game_id, f.version) for f in taken] == [(GAME, 1)]

    async def test_a_group_created_at_the_end_sees_only_what_comes_next(
        self, store: EventStore
    ) -> None:
        p = store.partition_of(GAME)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        assert await store.ensure_group(p, "late", start_id="$") is True
        assert await store.read_group("late", "r", [p]) == []
        await store.append(
            GAME, command_id="c2", expected_version=1, events=events("b"), outcome=b"2"
        )
        assert [f.version for f in await store.read_group("late", "r", [p])] == [2]

    async def test_reading_a_group_that_does_not_exist_is_a_store_error(
        self, store: EventStore
    ) -> None:
        with pytest.raises(StoreError, match="NOGROUP"):
            await store.read_group("nobody", "r", [0])

    # -- hash-linked appends (the durability issue's promise; every back end keeps it) --------

    async def test_each_event_is_stored_and_fed_with_its_hash(self, store: EventStore) -> None:
        data, hashes = chained("a", "b")
        (result,) = await store.append_many(
            [AppendRequest(GAME, "c1", 0, data, b"r", b"meta", "", hashes)]
        )
        assert result == Appended(1, 2)
        assert await store.read(GAME) == [
            StoredEvent(1, data[0], b"meta", hashes[0]),
            StoredEvent(2, data[1], None, hashes[1]),
        ]
        assert [(f.version, f.hash) for f in await feed_of(store)] == [
            (1, hashes[0]),
            (2, hashes[1]),
        ]

    async def test_the_same_version_on_another_history_is_a_conflict(
        self, store: EventStore
    ) -> None:
        _, lost = chained("a")  # the history a writer decided on, lost since
        survivor, survivor_hashes = chained("x")
        await store.append_many(
            [AppendRequest(GAME, "c1", 0, survivor, b"1", None, "", survivor_hashes)]
        )
        data, hashes = chained("b", prev=lost[-1])
        (result,) = await store.append_many(
            [AppendRequest(GAME, "stale", 1, data, b"2", None, lost[-1], hashes)]
        )
        assert result == Conflict(expected=1, actual=1)
        assert isinstance(result, Conflict)
        assert result.actual_hash == survivor_hashes[-1]
        assert await store.version(GAME) == 1
        assert await store.get_outcome(GAME, "stale") is None

    async def test_the_matching_prev_hash_appends_and_a_new_game_needs_an_empty_one(
        self, store: EventStore
    ) -> None:
        first, first_hashes = chained("a")
        refused = await store.append_many(
            [AppendRequest(GAME, "c0", 0, first, b"0", None, "not-empty", first_hashes)]
        )
        assert refused == [Conflict(expected=0, actual=0)]
        assert await store.append_many(
            [AppendRequest(GAME, "c1", 0, first, b"1", None, "", first_hashes)]
        ) == [Appended(1, 1)]
        data, hashes = chained("b", "c", prev=first_hashes[-1])
        assert await store.append_many(
            [AppendRequest(GAME, "c2", 1, data, b"2", None, first_hashes[-1], hashes)]
        ) == [Appended(2, 3)]

    async def test_a_version_conflict_reports_the_stored_last_hash(self, store: EventStore) -> None:
        data, hashes = chained("a", "b")
        await store.append_many([AppendRequest(GAME, "c1", 0, data, b"1", None, "", hashes)])
        (result,) = await store.append_many(
            [AppendRequest(GAME, "c2", 1, [b"c"], b"2", None, hashes[0], ["h"])]
        )
        assert result == Conflict(expected=1, actual=2)
        assert isinstance(result, Conflict)
        assert result.actual_hash == hashes[-1]

    async def test_a_retry_is_a_duplicate_whatever_its_hash(self, store: EventStore) -> None:
        data, hashes = chained("a")
        first = AppendRequest(GAME, "c1", 0, data, b"ok", None, "", hashes)
        more, more_hashes = chained("b", prev=hashes[-1])
        await store.append_many(
            [first, AppendRequest(GAME, "c2", 1, more, b"2", None, hashes[-1], more_hashes)]
        )
        assert await store.append_many([first]) == [Duplicate(b"ok")]

    async def test_without_prev_hash_only_the_version_is_checked(self, store: EventStore) -> None:
        data, hashes = chained("a")
        await store.append_many([AppendRequest(GAME, "c1", 0, data, b"1", None, "", hashes)])
        plain = await store.append(
            GAME, command_id="c2", expected_version=1, events=[b"x"], outcome=b""
        )
        assert plain == Appended(2, 2)
        assert (await store.read(GAME, 1))[0].hash is None
        # After an event stored without a hash there is nothing to compare a prev_hash with.
        after = await store.append_many(
            [AppendRequest(GAME, "c3", 2, [b"y"], b"3", None, "whatever", ["h3"])]
        )
        assert after == [Appended(3, 3)]

    async def test_one_hash_per_event(self, store: EventStore) -> None:
        with pytest.raises(ValueError, match="one per event"):
            await store.append_many(
                [AppendRequest(GAME, "c", 0, [b"a", b"b"], b"", None, "", ["h"])]
            )
        assert await store.version(GAME) == 0

    async def test_pagination_over_more_than_a_page(self, store: EventStore) -> None:
        total, batch = 2_345, 100
        version = 0
        while version < total:
            size = min(batch, total - version)
            names = [f"e{version + i + 1}" for i in range(size)]
            result = await store.append(
                GAME,
                command_id=f"c{version}",
                expected_version=version,
                events=events(*names),
                outcome=b"ok",
            )
            assert isinstance(result, Appended)
            version = result.last_version
        stored = await store.read(GAME)
        assert [e.version for e in stored] == list(range(1, total + 1))
        assert stored[-1].data == events(f"e{total}")[0]
        middle = await store.read(GAME, after_version=999, limit=1_002)
        assert [e.version for e in middle] == list(range(1_000, 2_002))

    async def test_append_rejects_bad_input(self, store: EventStore) -> None:
        with pytest.raises(ValueError, match="non-empty"):
            await store.append(GAME, command_id="c1", expected_version=0, events=[], outcome=b"")
        with pytest.raises(TypeError, match="bytes"):
            await store.append(
                GAME,
                command_id="c1",
                expected_version=0,
                events=["text"],  # type: ignore[list-item]  # the wrong type on purpose
                outcome=b"",
            )
        with pytest.raises(ValueError, match="game id"):
            await store.append(
                "a:b", command_id="c1", expected_version=0, events=events("a"), outcome=b""
            )
        assert await store.list_games() == []

    async def test_an_invalid_game_id_is_refused_by_every_call(self, store: EventStore) -> None:
        for call in (
            store.read("a:b"),
            store.read_many([("a b", 0)]),
            store.version("{x}"),
            store.exists(""),
            store.get_outcome("a:b", "c1"),
            store.record_outcome("a:b", "c1", b"no"),
        ):
            with pytest.raises(ValueError, match="game id"):
                await call
        assert await store.list_games() == []

    async def test_partition_is_stable(self, store: EventStore) -> None:
        assert store.partition_of("game-1") == 12
        assert store.partition_of("0b9c1e4e-7d2a-4f0e-9a55-3c1f0d6e8a21") == 11
        assert list(store.partitions()) == list(range(16))


@pytest.mark.redis
class TestRedisLayout:
    """What is specific to the Redis back end: ids, keys, slots, TTLs, raw streams."""

    async def test_stream_entry_ids_are_the_versions(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"1"
        )
        await store.append(
            GAME, command_id="c2", expected_version=2, events=events("c"), outcome=b"2"
        )
        raw = await entries_of(redis, store.layout.game_key(GAME))
        assert [entry_id for entry_id, _ in raw] == [b"0-1", b"0-2", b"0-3"]
        assert all(
            fields == {b"event": data}
            for (_, fields), data in zip(raw, events("a", "b", "c"), strict=True)
        )

    async def test_meta_is_an_extra_field_of_the_first_entry(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME,
            command_id="c1",
            expected_version=0,
            events=events("a", "b"),
            outcome=b"1",
            batch_meta=b"m",
        )
        raw = await entries_of(redis, store.layout.game_key(GAME))
        assert raw[0][1] == {b"event": events("a")[0], b"meta": b"m"}
        assert raw[1][1] == {b"event": events("b")[0]}

    async def test_keys_of_a_game_share_one_cluster_slot(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        p = store.partition_of(GAME)
        keys = [
            store.layout.game_key(GAME),
            store.layout.command_key(GAME, "c1"),
            store.feed_key(p),
            store.layout.games_key(p),
        ]
        assert keys == [
            "rn:{p12}:game:game-1",
            "rn:{p12}:cmd:game-1:c1",
            "rn:{p12}:feed",
            "rn:{p12}:games",
        ]
        assert sorted(cast(bytes, k).decode() for k in await redis.keys("*")) == sorted(keys)
        assert len({key_slot(k.encode()) for k in keys}) == 1
        assert key_slot(b"rn:{p12}:game:game-1") == key_slot(b"p12")
        # The partitions spread over different slots (so over the nodes of a cluster).
        assert len({key_slot(store.feed_key(q).encode()) for q in store.partitions()}) == 16

    def test_braced_prefix_is_refused(self) -> None:
        with pytest.raises(ValueError, match="brace"):
            KeyLayout(prefix="{rn}")

    async def test_outcomes_expire_streams_do_not(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis, outcome_ttl_seconds=3600)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        await store.record_outcome(GAME, "c2", b"rejected")
        p = store.partition_of(GAME)
        for key in (store.layout.command_key(GAME, "c1"), store.layout.command_key(GAME, "c2")):
            assert 3500 < await redis.ttl(key) <= 3600
        for key in (store.layout.game_key(GAME), store.feed_key(p), store.layout.games_key(p)):
            assert await redis.ttl(key) == -1
        forever = RedisEventStore(redis, outcome_ttl_seconds=None)
        await forever.append(
            GAME, command_id="c3", expected_version=1, events=events("b"), outcome=b"3"
        )
        assert await redis.ttl(store.layout.command_key(GAME, "c3")) == -1

    async def test_append_many_survives_a_flushed_script_cache(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        await redis.script_flush()
        results = await store.append_many(
            [
                AppendRequest(GAME, "c2", 1, events("b"), b"2"),
                AppendRequest("g2", "c", 0, [b"x"], b""),
            ]
        )
        assert results == [Appended(2, 2), Appended(1, 1)]
        await redis.script_flush()  # one append alone (no pipeline)
        alone = await store.append_many([AppendRequest(GAME, "c3", 2, events("c"), b"3")])
        assert alone == [Appended(3, 3)]

    async def test_conflict_leaves_raw_streams_unchanged(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        p = store.partition_of(GAME)
        before = {
            k: await redis.xrange(k) for k in (store.layout.game_key(GAME), store.feed_key(p))
        }
        assert await store.append(
            GAME, command_id="c2", expected_version=0, events=events("x"), outcome=b"2"
        ) == Conflict(0, 1)
        after = {k: await redis.xrange(k) for k in before}
        assert after == before

    async def test_feed_entry_fields(self, redis: aioredis.Redis) -> None:
        store = RedisEventStore(redis)
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a"), outcome=b"1"
        )
        [(_, fields)] = await entries_of(redis, store.feed_key(store.partition_of(GAME)))
        assert fields == {b"game": b"game-1", b"version": b"1", b"event": events("a")[0]}

    async def test_concurrent_appenders_on_separate_connections(self, redis_url: str) -> None:
        clients = [aioredis.Redis.from_url(redis_url) for _ in range(4)]
        try:
            await clients[0].flushall()
            stores = [RedisEventStore(c) for c in clients]
            results = await asyncio.gather(
                *(
                    stores[i % 4].append(
                        GAME,
                        command_id=f"c{i}",
                        expected_version=0,
                        events=events(f"{i}"),
                        outcome=b"ok",
                    )
                    for i in range(40)
                )
            )
            assert sum(isinstance(r, Appended) for r in results) == 1
            assert await stores[0].version(GAME) == 1
        finally:
            for c in clients:
                await c.aclose()

    async def test_autoclaim_skips_entries_deleted_from_the_feed(
        self, redis: aioredis.Redis
    ) -> None:
        store = RedisEventStore(redis)
        p = store.partition_of(GAME)
        await store.ensure_group(p, "proj")
        await store.append(
            GAME, command_id="c1", expected_version=0, events=events("a", "b"), outcome=b"1"
        )
        taken = await store.read_group("proj", "crashed", [p])
        await redis.xdel(store.feed_key(p), taken[0].entry_id)
        claimed = await store.autoclaim(p, "proj", "alive", min_idle_ms=0)
        assert [f.version for f in claimed] == [2]
        await store.ack(p, "proj", [f.entry_id for f in claimed])
        assert (await redis.xpending(store.feed_key(p), "proj"))["pending"] == 0

    async def test_resp3_client_works_too(self, redis_url: str) -> None:
        client = aioredis.Redis.from_url(redis_url, protocol=3)
        try:
            await client.flushall()
            store = RedisEventStore(client)
            await store.append(
                GAME,
                command_id="c1",
                expected_version=0,
                events=events("a"),
                outcome=b"1",
                batch_meta=b"m",
            )
            assert await store.read(GAME) == [StoredEvent(1, events("a")[0], b"m")]
            assert [(f.game_id, f.version) for f in await feed_of(store)] == [(GAME, 1)]
        finally:
            await client.aclose()

    async def test_decoding_client_is_refused(self, redis_url: str) -> None:
        client = aioredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            with pytest.raises(ValueError, match="decode_responses"):
                RedisEventStore(client)
        finally:
            await client.aclose()


def test_partition_is_the_same_in_another_process() -> None:
    code = "from eventstore import partition_of; print(partition_of('game-1', 16))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert int(out.stdout) == partition_of("game-1", 16) == 12


def test_fixture_skips_loudly_without_redis(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Without Redis the fixture must skip with instructions, never pass silently."""
    root = str(Path(__file__).resolve().parents[1] / "conftest.py")
    (conftest,) = [  # the suite's own conftest (the browser tests' is a `conftest` too)
        plugin
        for plugin in request.config.pluginmanager.get_plugins()
        if getattr(plugin, "__file__", None) == root
    ]

    monkeypatch.delenv("RENATURE_REQUIRE_REDIS", raising=False)
    assert "redis-server" in conftest.NO_REDIS_REASON
    assert "REDIS_URL" in conftest.NO_REDIS_REASON
    with pytest.raises(pytest.skip.Exception, match="NO REDIS AVAILABLE"):
        conftest._no_redis()
    monkeypatch.setenv("RENATURE_REQUIRE_REDIS", "1")
    with pytest.raises(pytest.fail.Exception, match="NO REDIS AVAILABLE"):
        conftest._no_redis()
