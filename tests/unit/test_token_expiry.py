"""UNIT tests of `TokenExpiry`'s bookkeeping (the lapse itself, on real Redis, is in
tests/integration/test_limits.py)."""

from __future__ import annotations

from typing import Any

from gameserver.gateway.expiry import TokenExpiry


class FakeGames:
    """Counts the reads of whether the game is over (each a read of the game's last event in
    the gateway)."""

    def __init__(self) -> None:
        self.reads = 0
        self.over = False

    async def is_over(self, game_id: str) -> bool:
        self.reads += 1
        return self.over


class FakeRedis:
    def __init__(self) -> None:
        self.expired: list[tuple[str, int]] = []

    async def expire(self, key: str, seconds: int, nx: bool = False) -> bool:
        self.expired.append((key, seconds))
        return True


class FakeTokens:
    def key(self, game_id: str) -> str:
        return f"seats:{game_id}"


async def test_a_running_game_is_read_once_a_second_and_an_ended_one_once() -> None:
    games, redis, now = FakeGames(), FakeRedis(), [100.0]
    expiry = TokenExpiry(redis, FakeTokens(), 60, 0.2, clock=lambda: now[0])  # type: ignore[arg-type]  # stand-ins for Redis and the tokens
    check: Any = expiry.check
    for _ in range(50):  # a seated player's requests while the game runs
        await check(games, "g")
    assert games.reads == 1
    games.over = True
    await check(games, "g")
    assert (games.reads, redis.expired) == (1, [])  # not looked at again yet
    now[0] += 0.25  # past recheck_s
    for _ in range(5):
        await check(games, "g")
    assert (games.reads, redis.expired) == (2, [("seats:g", 60)])


async def test_an_ended_game_is_looked_at_again_a_minute_on_as_a_crash_may_take_its_end_back() -> (
    None
):
    games, redis, now = FakeGames(), FakeRedis(), [100.0]
    expiry = TokenExpiry(redis, FakeTokens(), 60, 0.2, confirm_s=60, clock=lambda: now[0])  # type: ignore[arg-type]  # stand-ins for Redis and the tokens
    check: Any = expiry.check
    games.over = True
    await check(games, "g")
    assert (games.reads, len(redis.expired)) == (1, 1)
    now[0] += 30
    await check(games, "g")
    assert games.reads == 1  # an end seen is trusted for a minute
    games.over = False  # a crash took the end back (and the TTL with it)
    now[0] += 31
    await check(games, "g")
    assert (games.reads, len(redis.expired)) == (2, 1)  # seen running again
    games.over = True  # the game ends again
    now[0] += 0.25
    await check(games, "g")
    assert (games.reads, redis.expired) == (3, [("seats:g", 60), ("seats:g", 60)])
