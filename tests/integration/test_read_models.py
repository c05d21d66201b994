"""Read model writes (`projectors.models.ReadModels`): conditional on the version, by EVALSHA,
and still written after Redis forgot its scripts (a restart, SCRIPT FLUSH)."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from eventstore import KeyLayout
from gameserver.projectors.read_models import ReadModels

pytestmark = pytest.mark.redis


async def test_a_model_is_written_only_forward_even_after_redis_forgot_the_script(
    redis: aioredis.Redis,
) -> None:
    models = ReadModels(redis, KeyLayout(), "board")
    assert await models.write(("g-1", 2, b'{"v":2}', "")) == 1
    await redis.script_flush()
    assert await models.write_many([("g-1", 3, b'{"v":3}', ""), ("g-2", 1, b"{}", "")]) == [1, 1]
    assert await models.write(("g-1", 1, b'{"v":1}', "")) == 0  # older: the newer one stays
    assert await models.read("g-1") == (3, b'{"v":3}')
    assert await models.stored(["g-1", "g-3"]) == [(b"3", b""), (None, None)]
    await models.drop_all(["g-1"])
    assert await models.read("g-1") is None
    assert await models.read("g-2") is None  # every model of the projection goes
