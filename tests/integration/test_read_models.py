"""Read model writes (`projectors.models.ReadModels`): conditional on the version, by EVALSHA,
and still written after Redis forgot its scripts (a restart, SCRIPT FLUSH)."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from eventstore import KeyLayout
from eventstore.redis_values import text
from gameserver.projectors.read_models import ReadModels

pytestmark = pytest.mark.redis


async def test_a_model_is_written_only_forward_even_after_redis_forgot_the_script(
    redis: aioredis.Redis,
) -> None:
    models = ReadModels(redis, KeyLayout(), "board")
    assert await models.write(("g-1", 2, (b'{"v":2}',), "")) == 1
    await redis.script_flush()
    assert await models.write_many([("g-1", 3, (b'{"v":3}',), ""), ("g-2", 1, (b"{}",), "")]) == [
        1,
        1,
    ]
    assert await models.write(("g-1", 1, (b'{"v":1}',), "")) == 0  # older: the newer one stays
    assert await models.read("g-1") == (3, b'{"v":3}')
    assert await models.stored(["g-1", "g-3"]) == [(b"3", b""), (None, None)]
    await models.drop_all(["g-1"])
    assert await models.read("g-1") is None
    await redis.script_flush()  # one write alone (no pipeline) after Redis forgot the script
    assert await models.write(("g-1", 4, (b'{"v":4}',), "")) == 1
    assert await models.read("g-1") == (4, b'{"v":4}')
    assert await models.read("g-2") is None  # every model of the projection goes


async def test_a_write_acknowledges_its_feed_entries_unless_it_was_refused(
    redis: aioredis.Redis,
) -> None:
    """The entries a model was folded from are acknowledged by its write when the model is
    written or kept (as new), and stay pending when the write is refused (the fold is not on
    the stream's history: the projector replays the game and acknowledges after)."""
    layout = KeyLayout()
    models = ReadModels(redis, layout, "board")
    game = layout.game_key("g-1")
    for version, hash_ in ((1, "h1"), (2, "h2")):
        await redis.xadd(game, {"hash": hash_}, id=f"0-{version}")
    partition = layout.partition_of("g-1")
    feed = layout.feed_key(partition)
    await redis.xgroup_create(feed, "board", id="0", mkstream=True)
    ids = [text(await redis.xadd(feed, {"v": str(n)})) for n in range(3)]
    await redis.xreadgroup("board", "b1", {feed: ">"})

    async def pending() -> int:
        return int((await redis.xpending(feed, "board"))["pending"])

    ack = (partition, "board", ids[:1])
    assert await models.write_many([("g-1", 2, (b"{}",), "not-h2")], [ack]) == [-1]
    assert await pending() == 3  # refused: nothing acknowledged
    assert await models.write_many([("g-1", 1, (b"{}",), "h1")], [ack]) == [1]
    assert await pending() == 2
    kept = (partition, "board", ids[1:])
    assert await models.write_many([("g-1", 1, (b"{}",), "h1")], [kept]) == [
        0
    ]  # kept: acknowledged
    assert await pending() == 0


async def test_models_written_together_move_forward_each_on_its_own(
    redis: aioredis.Redis,
) -> None:
    """Models of several projections written by one script (`projectors.together`): each
    only forward (one ahead is kept, the other written), the oldest is what `stored` reports,
    and a write refused (its fold is not on the stream's history) writes none of them."""
    layout = KeyLayout()
    models = ReadModels(redis, layout, "board", "score")
    game = layout.game_key("g-1")
    for version, hash_ in ((1, "h1"), (2, "h2"), (3, "h3")):
        await redis.xadd(game, {"hash": hash_}, id=f"0-{version}")
    ahead = ReadModels(redis, layout, "board")
    assert await ahead.write(("g-1", 3, (b"board-3",), "h3")) == 1

    assert await models.stored(["g-1"]) == [(None, None)]  # the score model: none yet
    assert await models.write(("g-1", 2, (b"board-2", b"score-2"), "h2")) == 1
    assert await ahead.read("g-1") == (3, b"board-3")  # ahead: kept
    assert await ReadModels(redis, layout, "score").read("g-1") == (2, b"score-2")
    assert await models.stored(["g-1"]) == [(b"2", b"h2")]  # the older of the two

    assert await models.write(("g-1", 3, (b"board-x", b"score-x"), "not-h3")) == -1
    assert await models.stored(["g-1"]) == [(b"2", b"h2")]  # refused: nothing written
    assert await models.write(("g-1", 3, (b"board-3", b"score-3"), "h3")) == 1
    assert await models.write(("g-1", 3, (b"board-3", b"score-3"), "h3")) == 0  # both as new
    with pytest.raises(ValueError, match="1 models for 2 names"):
        await models.write(("g-1", 4, (b"board-4",), "h4"))
    await models.drop_all([])
    assert await redis.keys("*:board:*") == []
    assert await redis.keys("*:score:*") == []
