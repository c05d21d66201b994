"""Rate-limit leases (`gateway.limit_leases`) against a real Redis: workers that each take a
bucket's units in leases and spend them in process still hold the limit within the stated
bound (the limit plus ``n - 1`` per worker, for leases of ``n``), one worker alone holds it
exactly, and most requests cost no round trip."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest
import redis.asyncio as aioredis
from limits import parse

from gameserver.gateway.limit_leases import LeasedWindow
from gameserver.gateway.ratelimit import Limiter
from gameserver.gateway.refusal_memory import Refused
from gameserver.runtime.settings_parts import RateLimits

pytestmark = pytest.mark.redis

LIMIT = 200
LIMITS = RateLimits(read=f"{LIMIT}/hour", lease=16)  # an hour: no window ends mid-test
LEASE = 16  # min(16, 200 // 10)


async def admitted(limiter: Limiter, attempts: int, identity: str = "10.0.0.1") -> int:
    """Requests of ``identity`` counted in ``read`` until the first refusal (or ``attempts``)."""
    for number in range(attempts):
        try:
            await limiter.hit("read", identity)
        except Refused:
            return number
    return attempts


def test_a_lease_is_a_tenth_of_its_limit_at_most_the_configured_size() -> None:
    leases = LeasedWindow(window=None, most=16)  # type: ignore[arg-type]  # size() reads no Redis
    assert leases.size(parse("19/minute")) == 1  # counted one by one, exactly as without
    assert leases.size(parse("30/second")) == 3
    assert leases.size(parse("1000000/second")) == 16
    unleased = LeasedWindow(window=None, most=1)  # type: ignore[arg-type]
    assert unleased.size(parse("1000/second")) == 1


async def test_one_worker_admits_exactly_the_limit_with_few_round_trips(
    redis: aioredis.Redis, redis_url: str
) -> None:
    limiter = Limiter(redis_url, LIMITS)
    try:
        assert await admitted(limiter, LIMIT + 50) == LIMIT
        # 12 leases of 16; 8 of one (each after a lease of 16 refused); the refusal: 2
        assert limiter.leases.round_trips == LIMIT // LEASE + 2 * (LIMIT % LEASE) + 2
        with pytest.raises(Refused) as refused:
            await limiter.hit("read", "10.0.0.1")
        assert refused.value.retry_after >= 1
        assert await admitted(limiter, 5, "10.0.0.2") == 5  # another address has its own
    finally:
        await limiter.aclose()


async def test_concurrent_requests_of_one_worker_share_one_lease(
    redis: aioredis.Redis, redis_url: str
) -> None:
    limiter = Limiter(redis_url, LIMITS)

    async def one() -> bool:
        try:
            await limiter.hit("read", "10.0.0.1")
        except Refused:
            return False
        return True

    try:
        outcomes = await asyncio.gather(*(one() for _ in range(LIMIT + 60)))
        assert sum(outcomes) == LIMIT
        # as one request after the other: each refused one asks Redis twice itself
        assert limiter.leases.round_trips <= LIMIT // LEASE + 2 * (LIMIT % LEASE) + 2 * 60
    finally:
        await limiter.aclose()


async def test_two_workers_stay_within_the_bound_and_reach_the_limit(
    redis: aioredis.Redis, redis_url: str
) -> None:
    first, second = Limiter(redis_url, LIMITS), Limiter(redis_url, LIMITS)
    try:
        # The first takes a lease and spends one unit of it: the second cannot have those.
        assert await admitted(first, 1) == 1
        alone = await admitted(second, LIMIT)
        assert alone == LIMIT - LEASE  # refused early by the first's unspent units (n - 1)
        assert await admitted(first, LIMIT) == LEASE - 1  # which the first still spends
        # Interleaved from here on (a fresh address): never more than the bound, and the
        # limit is reached once every lease is spent.
        counts = await asyncio.gather(
            admitted(first, LIMIT, "10.0.0.9"), admitted(second, LIMIT, "10.0.0.9")
        )
        assert LIMIT <= sum(counts) <= LIMIT + 2 * (LEASE - 1)
    finally:
        await first.aclose()
        await second.aclose()


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from gameserver.gateway.ratelimit import Limiter
    from gameserver.gateway.refusal_memory import Refused
    from gameserver.runtime.settings_parts import RateLimits

    async def main() -> None:
        limiter = Limiter(sys.argv[1], RateLimits(read=sys.argv[2], lease=16))
        print("ready", flush=True)
        sys.stdin.readline()
        count = 0
        try:
            while count < 10_000:
                await limiter.hit("read", "10.0.0.7")
                count += 1
        except Refused:
            pass
        print(count, flush=True)
        await limiter.aclose()

    asyncio.run(main())
    """
)


async def test_two_processes_sharing_a_limit_stay_within_the_bound(
    redis: aioredis.Redis, redis_url: str
) -> None:
    other = subprocess.Popen(
        [sys.executable, "-c", WORKER, redis_url, f"{LIMIT}/hour"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    limiter = Limiter(redis_url, LIMITS)
    try:
        assert other.stdin is not None
        assert other.stdout is not None
        ready = await asyncio.to_thread(other.stdout.readline)
        assert ready.strip() == "ready"
        other.stdin.write("go\n")
        other.stdin.flush()
        here = await admitted(limiter, 10_000, "10.0.0.7")
        there = int((await asyncio.to_thread(other.stdout.readline)).strip())
        assert LIMIT <= here + there <= LIMIT + 2 * (LEASE - 1), (here, there)
        assert here > 0 or there > 0
    finally:
        other.kill()
        other.wait()
        await limiter.aclose()
