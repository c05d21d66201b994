"""Board and score projectors against a real Redis: feeds in, read models out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameplatform.interface import HostedState
from gameserver.projectors import (
    BoardProjection,
    Projector,
    ScoreProjection,
    model_key,
)
from gameserver.projectors.score_projection import ScoreFold, ScoreModel
from gameserver.runtime.bus import BOARD_GROUP
from renature import events as e
from renature.game import play, replay
from support.projecting import (
    append_batches,
    append_games,
    commands_per_cached_batch,
    drain,
    expected_board,
)

pytestmark = pytest.mark.redis

GAMES = {"g-one": (2, "seed-one"), "g-two": (3, "seed-two")}


@pytest.fixture
def store(redis: aioredis.Redis) -> RedisEventStore:
    return RedisEventStore(redis)


@pytest.fixture
async def games(store: RedisEventStore) -> dict[str, list[e.Event]]:
    """Whole games played by bots, appended batch by batch as the rules service would."""
    return await append_games(store, GAMES)


def board_projector(
    store: RedisEventStore, redis: aioredis.Redis, consumer: str = "b1"
) -> Projector[HostedState]:
    return Projector(store, redis, BoardProjection(), consumer, batch=50)


def score_projector(
    store: RedisEventStore, redis: aioredis.Redis, consumer: str = "s1"
) -> Projector[ScoreFold]:
    return Projector(store, redis, ScoreProjection(), consumer, batch=50)


async def models(
    projector: Projector[Any], game_ids: Iterable[str]
) -> dict[str, tuple[int, bytes] | None]:
    return {game_id: await projector.read_model(game_id) for game_id in game_ids}


def assert_public(model_bytes: bytes) -> None:
    """No hand, reserve or (before the end) token identity in a board model."""
    model = msgspec.json.decode(model_bytes)
    assert model["viewer"] is None
    for seat in model["seats"]:
        assert seat["hand"] is None
        assert set(seat) >= {"hand_count", "reserve_count"}
        assert "reserve" not in seat
        if model["phase"] != "finished":
            assert all(t["id"] is None and t["back"] is None for t in seat["tokens"])


async def test_board_models_equal_a_fresh_view_of_the_stream(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = board_projector(store, redis)
    read = await drain(projector)

    assert read == sum(len(events) for events in games.values())
    for game_id, events in games.items():
        stored = await projector.read_model(game_id)
        assert stored == (events[-1].version, expected_board(events))
        assert_public(stored[1])


async def test_score_models_match_the_replayed_scores(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = score_projector(store, redis)
    await drain(projector)

    for game_id, events in games.items():
        state = replay(events)
        assert state is not None
        stored = await projector.read_model(game_id)
        assert stored is not None
        model = msgspec.json.decode(stored[1], type=ScoreModel)
        assert model.version == state.version
        assert [s.score for s in model.seats] == [s.score for s in state.seats]
        assert all(sum(s.breakdown.values()) == s.score for s in model.seats)
        assert {"start", "final_areas", "clouds"} <= set(model.seats[0].breakdown)
        assert model.winners == list(state.winners)


async def test_read_model_keys_share_the_games_hash_slot(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    await drain(board_projector(store, redis))
    for game_id in games:
        key = model_key(store.layout, "board", game_id)
        tag = store.layout.tag(store.partition_of(game_id))
        assert key == f"rn:{tag}:board:{game_id}"
        assert await redis.exists(key)
        assert store.layout.game_key(game_id).startswith(f"rn:{tag}:")


async def test_redelivered_entries_are_not_applied_twice(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = score_projector(store, redis)
    await drain(projector)
    before = await models(projector, games)

    # The whole history delivered again, to the same consumer and to a fresh one (empty cache).
    for partition in store.partitions():
        await redis.xgroup_setid(store.feed_key(partition), projector.projection.group, "0")
    again = await drain(projector)
    fresh = score_projector(store, redis, consumer="s2")
    for partition in store.partitions():
        await redis.xgroup_setid(store.feed_key(partition), projector.projection.group, "0")
    again_fresh = await drain(fresh)

    assert again == again_fresh == sum(len(events) for events in games.values())
    assert await models(projector, games) == before


async def test_an_entry_beyond_the_cache_catches_up_from_the_stream(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = board_projector(store, redis)
    await projector.setup()
    entries = await store.read_group(BOARD_GROUP, "b1", store.partitions(), count=10_000)
    last_of_one = [x for x in entries if x.game_id == "g-one"][-1]

    await projector.process([last_of_one])  # nothing cached, versions 1..n-1 never delivered

    events = games["g-one"]
    assert await projector.read_model("g-one") == (events[-1].version, expected_board(events))


async def test_pending_entries_of_a_dead_consumer_are_reclaimed(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    dead = board_projector(store, redis, consumer="dead")
    await dead.setup()
    taken = await store.read_group(BOARD_GROUP, "dead", store.partitions(), count=10_000)
    assert taken  # read and never acknowledged: the consumer "crashed"

    live = board_projector(store, redis, consumer="live")
    assert await live.poll() == 0  # nothing new for the group
    reclaimed = await live.reclaim(min_idle_ms=0)

    assert reclaimed == len(taken)
    for partition in store.partitions():
        pending = await redis.xpending(store.feed_key(partition), BOARD_GROUP)
        assert pending["pending"] == 0
    for game_id, events in games.items():
        assert await live.read_model(game_id) == (events[-1].version, expected_board(events))


async def test_rebuild_gives_identical_models(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    for make in (board_projector, score_projector):
        projector = make(store, redis)
        await drain(projector)
        before = await models(projector, games)
        stray = model_key(store.layout, projector.projection.name, "gone")
        await redis.hset(stray, mapping={"version": 99, "model": b"{}"})
        await redis.hset(projector.key("g-one"), mapping={"version": 1, "model": b"garbage"})

        rebuilt = make(store, redis, consumer="rebuilder")
        assert await rebuilt.rebuild() == len(games)

        assert await models(rebuilt, games) == before
        assert not await redis.exists(stray)


async def test_models_follow_a_game_as_it_grows(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    events, _ = play(2, "growing", ["random", "random"], game_id="g-grow")
    board, score = board_projector(store, redis), score_projector(store, redis)
    starts = [i for i, ev in enumerate(events) if ev.cause is not None]  # batch boundaries
    for cut in (starts[3], starts[20], starts[len(starts) // 2], len(events)):
        await append_batches(store, "g-grow", events[:cut])
        await drain(board)
        await drain(score)
        appended = await store.version("g-grow")
        model = await board.read_model("g-grow")
        assert model == (appended, expected_board(events[:appended]))
        assert_public(model[1])


async def test_projector_instances_can_split_the_partitions_between_them(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    """Two instances of one projection, each assigned half the feeds
    (``RENATURE_PROJECTOR_PARTITIONS``): each writes the models of its own partitions' games
    and no other, and together every game is projected."""
    ids: dict[int, str] = {}
    for number in range(40):  # games in (nearly) every partition
        ids.setdefault(store.partition_of(f"split-{number}"), f"split-{number}")
    halves = (tuple(range(8)), tuple(range(8, 16)))
    for game_id in ids.values():
        events, _ = play(2, game_id, ["random"] * 2, game_id=game_id)
        await append_batches(store, game_id, events[:6])
    low, high = (
        Projector(store, redis, BoardProjection(), f"half-{n}", batch=50, partitions=half)
        for n, half in enumerate(halves)
    )
    await drain(low)
    projected = {p for p, game_id in ids.items() if await low.read_model(game_id) is not None}
    assert projected == {p for p in ids if p < 8}
    await drain(high)
    assert all([await high.read_model(game_id) is not None for game_id in ids.values()])


async def test_a_batch_that_continues_the_cached_fold_is_its_read_and_one_script(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    """Once a game's fold is cached, each later batch of its events costs the projector the
    feed's read and one ``EVALSHA`` (the model written and the entries acknowledged together):
    no read of the stored model, no ``XACK`` of its own. Redis's MONITOR counts the commands the
    clients send (a script's own calls are marked apart)."""
    sent, events = await commands_per_cached_batch(store, redis, board_projector, "g-trip")

    assert sent == ["XREADGROUP", "EVALSHA"] * 4
    appended = await store.version("g-trip")
    assert await board_projector(store, redis).read_model("g-trip") == (
        appended,
        expected_board(events[:appended]),
    )
    for partition in store.partitions():
        assert (await redis.xpending(store.feed_key(partition), BOARD_GROUP))["pending"] == 0
