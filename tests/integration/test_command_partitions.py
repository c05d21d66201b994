"""Commands travel on the command stream of their game's partition (`CommandPartitions`), and a
rules instance reads only the partitions it is assigned (``RENATURE_RULES_PARTITIONS``): on a
real Redis, commands of many games land on many streams and are all answered, two instances
with disjoint partitions each answer only their own, and a dead instance's pending commands
are taken over on every stream."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import cast

import msgspec
import pytest
import redis.asyncio as aioredis
from faststream.redis.parser.binary import BinaryMessageFormatV1

from devkit.waiting import eventually
from eventstore import CommandPartitions, KeyLayout, RedisEventStore
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import bus
from gameserver.runtime.bus import CommandEnvelope
from gameserver.runtime.rules_client import CommandTimeout, RulesClient
from gameserver.runtime.settings import Settings
from renature import commands as c
from support.pending import left_pending

pytestmark = pytest.mark.redis


def create(game_id: str, command_id: str = "create") -> CommandEnvelope:
    return CommandEnvelope(game_id, command_id, c.CreateGame(game_id, 2, seed=""))


def games_by_partition(commands: CommandPartitions, per_partition: int) -> dict[int, list[str]]:
    """Game ids, ``per_partition`` of each command partition."""
    found: dict[int, list[str]] = defaultdict(list)
    n = 0
    while min((len(found[p]) for p in range(commands.count)), default=0) < per_partition:
        game = f"g-part-{n}"
        if len(found[commands.partition_of(game)]) < per_partition:
            found[commands.partition_of(game)].append(game)
        n += 1
    return dict(found)


async def games_on(redis: aioredis.Redis, stream: str) -> set[str]:
    """The game ids of the envelopes on a command stream."""
    entries = cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(stream))
    return {
        msgspec.json.decode(BinaryMessageFormatV1.parse(fields[b"__data__"])[0])["game_id"]
        for _, fields in entries
    }


async def test_commands_of_games_in_different_partitions_land_on_their_own_streams(
    redis: aioredis.Redis, redis_url: str
) -> None:
    commands = CommandPartitions(count=16)  # a stream per game partition
    games = [g for ids in games_by_partition(commands, 2).values() for g in ids]
    settings = Settings.of(redis_url=redis_url, consumer="rules-all", command_partitions=16)
    async with RulesService(settings), RulesClient(redis, streams=commands) as client:
        replies = await asyncio.gather(*(client.send(create(g), 5) for g in games))
    assert [(r.game_id, r.status) for r in replies] == [(g, "accepted") for g in games]
    for partition, stream in enumerate(commands.streams()):
        expected = {g for g in games if KeyLayout().partition_of(g) == partition}
        assert await games_on(redis, stream) == expected
        assert (await redis.xpending(stream, bus.RULES_GROUP))["pending"] == 0
    assert not await redis.exists("rn:commands")  # the single stream of old is gone


async def test_two_rules_instances_with_disjoint_partitions_answer_only_their_own(
    redis: aioredis.Redis, redis_url: str
) -> None:
    commands = CommandPartitions(KeyLayout(), 4)  # streams 0..3, partitions p % 4
    games = games_by_partition(commands, 3)
    low, high = games[0] + games[1], games[2] + games[3]
    # a minute before a share counts as gone: the first instance never adopts streams 2 and 3
    base = Settings.of(redis_url=redis_url, command_partitions=4, reclaim_idle_ms=60_000)
    first = base.with_(consumer="rules-low", rules_partitions="0-1")
    async with RulesService(first), RulesClient(redis, streams=commands) as client:
        answered = await asyncio.gather(*(client.send(create(g), 5) for g in low))
        assert {r.status for r in answered} == {"accepted"}
        for game in high:  # nobody reads streams 2 and 3 yet
            with pytest.raises(CommandTimeout):
                await client.send(create(game), 0.3)
        store = RedisEventStore(redis)
        assert [await store.version(g) for g in high] == [0] * len(high)
        second = base.with_(consumer="rules-high", rules_partitions="2-3")
        async with RulesService(second):
            again = await asyncio.gather(*(client.send(create(g), 5) for g in high))
    assert {r.status for r in again} == {"accepted"}
    for partition, stream in enumerate(commands.streams()):
        consumers = {
            info["name"].decode() for info in await redis.xinfo_consumers(stream, bus.RULES_GROUP)
        }
        assert consumers == {"rules-low" if partition < 2 else "rules-high"}
        assert (await redis.xpending(stream, bus.RULES_GROUP))["pending"] == 0


async def test_instances_started_with_their_shares_split_the_streams_between_them(
    redis: aioredis.Redis, redis_url: str
) -> None:
    commands = CommandPartitions(KeyLayout(), 4)
    games = [game for ids in games_by_partition(commands, 2).values() for game in ids]
    base = Settings.of(redis_url=redis_url, command_partitions=4)
    even = base.with_(consumer="rules-0-of-2", rules_partitions="0/2")
    odd = base.with_(consumer="rules-1-of-2", rules_partitions="1/2")
    async with RulesService(even), RulesService(odd), RulesClient(redis, streams=commands) as c:
        replies = await asyncio.gather(*(c.send(create(g), 5) for g in games))
    assert {r.status for r in replies} == {"accepted"}
    for partition, stream in enumerate(commands.streams()):
        consumers = {
            info["name"].decode() for info in await redis.xinfo_consumers(stream, bus.RULES_GROUP)
        }
        assert consumers == {f"rules-{partition % 2}-of-2"}
        assert (await redis.xpending(stream, bus.RULES_GROUP))["pending"] == 0


async def test_a_share_whose_instance_is_gone_is_read_by_another_until_it_is_back(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """Commands on the odd streams, whose instance never started, are answered by the even
    instance once they have waited the orphan time (the reclaim idle time, here 300 ms); when
    the odd instance starts, the even one reads its streams no more."""
    commands = CommandPartitions(KeyLayout(), 4)
    games = games_by_partition(commands, 4)
    base = Settings.of(redis_url=redis_url, command_partitions=4, reclaim_idle_ms=300)
    even = RulesService(base.with_(consumer="rules-even", rules_partitions="0/2"))
    odd = base.with_(consumer="rules-odd", rules_partitions="1/2")
    async with even, RulesClient(redis, streams=commands) as client:
        orphans = games[1][:2] + games[3][:2]
        replies = await asyncio.gather(*(client.send(create(g), 10) for g in orphans))
        assert {r.status for r in replies} == {"accepted"}
        assert even._reading is not None
        reader = even._reading.reader
        assert {commands.streams()[1], commands.streams()[3]} <= set(reader.senders)
        async with RulesService(odd):
            pokes, later = [games[1][2], games[3][2]], [games[1][3], games[3][3]]
            for n in range(100):  # until the odd instance is handed commands and the even lets go
                if {commands.streams()[1], commands.streams()[3]} <= reader.released:
                    break
                await asyncio.gather(*(client.send(create(g, f"poke-{n}"), 10) for g in pokes))
                await asyncio.sleep(0.05)
            assert {commands.streams()[1], commands.streams()[3]} <= reader.released
            replies = await asyncio.gather(*(client.send(create(g), 10) for g in later))
            assert {r.status for r in replies} == {"accepted"}
    store = RedisEventStore(redis)
    played = orphans + pokes + later
    assert [await store.version(g) for g in played] == [1] * len(played)


async def test_what_a_gone_share_read_and_never_answered_is_claimed_by_another(
    redis: aioredis.Redis, redis_url: str
) -> None:
    commands = CommandPartitions(KeyLayout(), 4)
    game = games_by_partition(commands, 1)[1][0]
    stream = commands.stream_of(game)
    await left_pending(redis, create(game, "orphan"), stream, "odd-then-dead")
    settings = Settings.of(
        redis_url=redis_url,
        command_partitions=4,
        consumer="rules-even",
        rules_partitions="0/2",
        reclaim_idle_ms=200,
    )
    store = RedisEventStore(redis)

    async def decided() -> bool:
        return await store.version(game) == 1

    async with RulesService(settings):
        await eventually(decided, "the gone share's command decided")
    assert await store.version(game) == 1
    assert (await redis.xpending(stream, bus.RULES_GROUP))["pending"] == 0


async def test_a_dead_instances_commands_are_taken_over_on_every_stream(
    redis: aioredis.Redis, redis_url: str
) -> None:
    commands = CommandPartitions()  # the default: 4 streams
    games = [ids[0] for ids in games_by_partition(commands, 1).values()][:3]
    streams = [commands.stream_of(g) for g in games]
    assert len(set(streams)) == 3
    for game, stream in zip(games, streams, strict=True):
        await left_pending(redis, create(game, "orphan"), stream, "dead")
    store = RedisEventStore(redis)
    settings = Settings.of(redis_url=redis_url, consumer="rescuer", reclaim_idle_ms=100)

    async def decided() -> bool:
        return [await store.version(g) for g in games] == [1, 1, 1]

    async with RulesService(settings):
        await eventually(decided, "every orphaned command decided")
    assert [await store.version(g) for g in games] == [1, 1, 1]
    for stream in streams:
        assert (await redis.xpending(stream, bus.RULES_GROUP))["pending"] == 0


def test_a_rules_instance_refuses_partitions_that_do_not_exist() -> None:
    settings = Settings.of(command_partitions=4, rules_partitions="2-5", consumer="r")
    with pytest.raises(ValueError, match=r"command partition 4 out of range 0\.\.3"):
        RulesService(settings)


def test_a_rules_instance_refuses_a_share_that_would_leave_it_no_stream() -> None:
    settings = Settings.of(command_partitions=4, rules_partitions="5/8", consumer="r")
    with pytest.raises(ValueError, match="8 instances cannot share 4 command partitions"):
        RulesService(settings)
