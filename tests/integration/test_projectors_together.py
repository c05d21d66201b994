"""The board and score projections folded together (``renature serve models``, what ``serve
all`` runs): one consumer group, one read of the feeds, one fold pass and one write script per
game for both models, which equal what each projector writes alone."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameplatform import get_game
from gameserver.projectors import BoardProjection, Projector, ScoreProjection, board_and_score
from gameserver.runtime.bus import MODELS_GROUP
from renature import events as e
from renature.game import play
from support.projecting import (
    append_batches,
    append_games,
    commands_per_cached_batch,
    drain,
    expected_board,
)

pytestmark = pytest.mark.redis

GAMES = {"t-one": (2, "seed-one"), "t-two": (3, "seed-two"), "t-three": (4, "seed-three")}


@pytest.fixture
def store(redis: aioredis.Redis) -> RedisEventStore:
    return RedisEventStore(redis)


@pytest.fixture
async def games(store: RedisEventStore) -> dict[str, list[e.Event]]:
    return await append_games(store, GAMES, hashed=True)


def together(store: RedisEventStore, redis: aioredis.Redis, consumer: str = "m1") -> Projector[Any]:
    return Projector(store, redis, board_and_score(), consumer, batch=50)


async def stored_models(
    store: RedisEventStore, redis: aioredis.Redis, game_ids: list[str]
) -> dict[tuple[str, str], list[Any]]:
    """Every game's board and score hashes as stored (version, model, hash)."""
    found = {}
    for game_id in game_ids:
        for name in ("board", "score"):
            key = store.layout.model_key(name, game_id)
            found[game_id, name] = await redis.hmget(key, ["version", "model", "hash"])
    return found


def expected_score(events: list[e.Event]) -> bytes:
    """The score model of a fresh fold of ``events``."""
    projection, game = ScoreProjection(), get_game("renature")
    fold = None
    for event in events:
        fold = projection.apply(game, fold, event)
    assert fold is not None
    return projection.render(game, fold)


async def assert_models_at(
    store: RedisEventStore, redis: aioredis.Redis, game_id: str, events: list[e.Event]
) -> None:
    """Both models of the game are those of a fresh replay of ``events``, at its last version."""
    models = await stored_models(store, redis, [game_id])
    version = str(events[-1].version).encode()
    assert models[game_id, "board"][:2] == [version, expected_board(events)]
    assert models[game_id, "score"][:2] == [version, expected_score(events)]


async def test_models_folded_together_are_what_each_projector_writes_alone(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = together(store, redis)
    assert projector.projection.group == MODELS_GROUP
    assert await drain(projector) == sum(len(events) for events in games.values())
    for game_id, events in games.items():
        await assert_models_at(store, redis, game_id, events)
    folded = await stored_models(store, redis, list(games))

    await redis.delete(*(store.layout.model_key(n, g) for g, n in folded))
    for alone in (BoardProjection(), ScoreProjection()):
        await drain(Projector(store, redis, alone, "alone", batch=50))
    assert await stored_models(store, redis, list(games)) == folded
    for partition in store.partitions():  # every entry acknowledged by the models' writes
        assert (await redis.xpending(store.feed_key(partition), MODELS_GROUP))["pending"] == 0


async def test_a_batch_of_a_cached_game_is_one_read_and_one_script_for_both_models(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    """Both models of a game cost one ``XREADGROUP`` and one ``EVALSHA`` a batch, the cost of
    one projector alone: half the round trips (and wake-ups) of two projectors."""
    sent, events = await commands_per_cached_batch(store, redis, together, "t-trip")

    assert sent == ["XREADGROUP", "EVALSHA"] * 4
    await assert_models_at(store, redis, "t-trip", events[: await store.version("t-trip")])


async def test_together_and_apart_side_by_side_never_move_a_model_back(
    store: RedisEventStore, redis: aioredis.Redis
) -> None:
    """A deployment moving from the projectors apart to ``models`` runs both for a while:
    each writes only forward, so whichever writes a version first, the other keeps it, and a
    whole history delivered again to the folded projector changes nothing."""
    events, _ = play(3, "side-by-side", ["random"] * 3, game_id="t-side")
    board_alone = Projector(store, redis, BoardProjection(), "b1", batch=50)
    folded = together(store, redis)
    starts = [i for i, ev in enumerate(events) if ev.cause is not None]
    for n, cut in enumerate((starts[3], starts[10], starts[len(starts) // 2], len(events))):
        await append_batches(store, "t-side", events[:cut], hashed=True)
        for projector in (board_alone, folded) if n % 2 else (folded, board_alone):
            await drain(projector)
        await assert_models_at(store, redis, "t-side", events[: await store.version("t-side")])
    before = await stored_models(store, redis, ["t-side"])
    for partition in store.partitions():
        await redis.xgroup_setid(store.feed_key(partition), MODELS_GROUP, "0")
    assert await drain(together(store, redis, consumer="m2")) == len(events)
    assert await stored_models(store, redis, ["t-side"]) == before


async def test_a_model_of_another_history_is_replayed_and_both_models_written(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    """A board model ahead of the folded projector but not on the stream's history (a
    restore, lost writes): the game is replayed from its stream and both models written."""
    events = games["t-one"]
    board_key = store.layout.model_key("board", "t-one")
    await redis.hset(
        board_key, mapping={"version": events[-1].version, "model": b"{}", "hash": "not-it"}
    )
    await drain(together(store, redis))
    await assert_models_at(store, redis, "t-one", events)
    for partition in store.partitions():
        assert (await redis.xpending(store.feed_key(partition), MODELS_GROUP))["pending"] == 0


async def test_rebuild_drops_and_rebuilds_both_models(
    store: RedisEventStore, redis: aioredis.Redis, games: dict[str, list[e.Event]]
) -> None:
    projector = together(store, redis)
    await drain(projector)
    before = await stored_models(store, redis, list(games))
    stray = [store.layout.model_key(name, "gone") for name in ("board", "score")]
    for key in stray:
        await redis.hset(key, mapping={"version": 99, "model": b"{}"})
    await redis.hset(store.layout.model_key("score", "t-two"), mapping={"model": b"garbage"})

    assert await together(store, redis, consumer="rebuilder").rebuild() == len(games)

    assert await stored_models(store, redis, list(games)) == before
    assert not await redis.exists(*stray)
