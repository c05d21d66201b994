"""Shared fixtures: a Redis server for the tests that need one.

``redis_url`` finds a Redis in this order: the REDIS_URL environment variable, a private
``redis-server`` started on a free port, a Docker container (testcontainers). Without any of
them the tests that need Redis are skipped with a loud reason, never passed silently; set
RENATURE_REQUIRE_REDIS=1 (e.g. in CI) to turn that skip into a failure.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Generator, Iterator

import pytest
import redis.asyncio as aioredis
from hypothesis import settings

from devkit.redis_server import RedisServer, find_redis_server
from devkit.requirements import unavailable
from support import hang_report

# Property tests draw new examples on every run, so that over many runs they explore far more
# games than any fixed sample would; a failure is stored in .hypothesis/ and tried first next
# time. Where a run must be reproducible (CI, bisecting), HYPOTHESIS_PROFILE=ci makes every
# hypothesis test derandomized: the same examples on every run, chosen from the test's name.
# No deadline in either: a property says what is true, not how fast (speed is `make bench`'s),
# and on a busy 2-core machine a first example can take 300 ms where the next takes 3 (a CI run
# failed on hypothesis's 200 ms deadline in a test of bytes packed).
settings.register_profile("default", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

NO_REDIS_REASON = (
    "NO REDIS AVAILABLE - tests marked 'redis' were NOT run. Install redis-server "
    "(e.g. `apt-get install redis-server` or `brew install redis`), start a Docker engine "
    "(testcontainers then runs redis:7), or point REDIS_URL at a disposable Redis "
    "(it is flushed before every test)."
)


def _docker_reachable() -> bool:
    """Whether a Docker engine answers, so testcontainers can start a Redis container."""
    try:
        import docker  # testcontainers depends on it

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def _no_redis() -> None:
    """Skip loudly, or fail when the environment says Redis is mandatory."""
    unavailable(NO_REDIS_REASON)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_HANGS] = hang_report.install(config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """A test that runs close to its timeout gets its tasks' stacks written (`hang_report`)."""
    report = item.config.stash.get(_HANGS, None)
    if report is not None:
        report.begin(item.nodeid)
    try:
        return (yield)
    finally:
        if report is not None:
            report.end()


_HANGS = pytest.StashKey["hang_report.HangReport | None"]()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis that belongs to this test session."""
    env_url = os.environ.get("REDIS_URL")
    if env_url:
        yield env_url
    elif find_redis_server():
        with RedisServer() as server:
            yield server.url
    elif _docker_reachable():
        from testcontainers.redis import RedisContainer

        with RedisContainer("redis:7") as container:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(container.port)
            yield f"redis://{host}:{port}/0"
    else:
        _no_redis()


@pytest.fixture(name="redis")
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client on an empty Redis: the database is flushed before each test."""
    client = aioredis.Redis.from_url(redis_url)
    await client.flushall()
    try:
        yield client
    finally:
        await client.aclose()
