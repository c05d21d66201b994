"""What lets a service outlive Redis faults without a human.

- `wait_for_redis`: a service started before Redis (or while it restarts) waits with back-off
  (0.1 s doubling to 1 s) instead of exiting; it is connected within a second of Redis
  answering again.
- `BLOCKING_READ_OPTIONS`: the socket options of a client whose reads block (``XREADGROUP
  BLOCK``). redis-py's default 5 s socket timeout would cut such a read when the process was
  stopped (SIGSTOP, a long GC pause, an overloaded host) for more than 5 s: when it resumes,
  the timer fires before the reply is read, and the entries Redis already delivered are left
  pending with nobody working on them. These clients have no socket timeout (a read waits as
  long as it must; a dead server resets the connection, and TCP keepalive catches a vanished
  host).
- `fast_reconnect`: FastStream's Redis subscribers sleep a fixed 5 s after any fetch error
  (``CONSUME_ERROR_BACKOFF_SECONDS``, read as a module global of
  ``faststream.redis.subscriber.usecases.stream_subscriber``, which imports it from
  ``...usecases.basic``); every move would stall at least 5 s after a Redis restart. Both
  module globals are set to `RECONNECT_BACKOFF_SECONDS`.
- `heal_missing_group`: FastStream stops a stream subscriber for good on ``NOGROUP`` (Redis
  came back empty, the stream was deleted) and exits the app with status 0. The subscriber's
  fetch is wrapped instead: on ``NOGROUP`` the group is created again and fetching goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from gameserver.runtime.logging import get_logger

log = get_logger("renature.healing")

RECONNECT_BACKOFF_SECONDS: Final = 0.2
"""Pause after a failed fetch before the next try: short enough to be back within a second of
Redis returning, long enough not to spin while it is away."""

BLOCKING_READ_OPTIONS: Final[dict[str, Any]] = {
    "socket_timeout": None,
    # A Redis that is down refuses at once; this bounds only a connection nobody answers. 2 s
    # failed a rules service's start once on a two-core machine running the whole suite (most
    # likely the process waited its turn for the CPU longer than that); a restarted Redis is
    # found within the second either way.
    "socket_connect_timeout": 5.0,
    "socket_keepalive": True,
}

FIRST_BACKOFF: Final = 0.1
MAX_BACKOFF: Final = 1.0


def backoff_delays(first: float = FIRST_BACKOFF, cap: float = MAX_BACKOFF) -> Any:
    """0.1, 0.2, 0.4, 0.8, 1.0, 1.0, ... seconds."""
    delay = first
    while True:
        yield delay
        delay = min(delay * 2, cap)


async def wait_for_redis(redis: Redis, service: str, deadline: float | None = None) -> None:
    """Return once Redis answers PING (and is done loading its data set); retry with back-off.

    ``deadline`` (a ``time.monotonic()`` value) bounds the wait with a ``TimeoutError``; by
    default a service waits as long as it takes.
    """
    started = time.monotonic()
    attempts = 0
    for delay in backoff_delays():
        try:
            await redis.ping()
        except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as error:
            attempts += 1
            if attempts == 1 or attempts % 30 == 0:
                log.warning("waiting_for_redis", service=service, error=str(error))
            if deadline is not None and time.monotonic() + delay > deadline:
                raise TimeoutError(f"Redis did not answer: {error}") from error
            await asyncio.sleep(delay)
        else:
            if attempts:
                waited = round(time.monotonic() - started, 2)
                log.info("redis_reachable", service=service, waited_s=waited)
            return


def fast_reconnect(seconds: float = RECONNECT_BACKOFF_SECONDS) -> None:
    """Shorten FastStream's fixed back-off after a fetch error (see the module docstring)."""
    from faststream.redis.subscriber.usecases import basic, stream_subscriber

    basic.CONSUME_ERROR_BACKOFF_SECONDS = seconds  # type: ignore[assignment]
    setattr(stream_subscriber, "CONSUME_ERROR_BACKOFF_SECONDS", seconds)  # noqa: B010


def is_nogroup(error: BaseException) -> bool:
    return isinstance(error, redis_errors.ResponseError) and "NOGROUP" in str(error)


def heal_missing_group(subscriber: Any, recreate: Callable[[], Awaitable[None]]) -> None:
    """Make a FastStream stream subscriber recreate its consumer group on ``NOGROUP`` rather
    than stop (and make the app exit 0). ``recreate`` creates the group (idempotently)."""
    fetch = subscriber._get_msgs

    async def get_msgs(*args: Any) -> None:
        try:
            await fetch(*args)
        except redis_errors.ResponseError as error:
            if not is_nogroup(error):
                raise
            log.warning("consumer_group_missing", error=str(error))
            try:
                await recreate()
            except (redis_errors.RedisError, OSError) as again:
                log.warning("consumer_group_not_recreated", error=str(again))
                await asyncio.sleep(RECONNECT_BACKOFF_SECONDS)
            else:
                log.info("consumer_group_recreated")
                subscriber.autoclaim_start_id = b"0-0"

    subscriber._get_msgs = get_msgs


async def ensure_stream_group(redis: Redis, stream: str, group: str, start_id: str = "0") -> bool:
    """``XGROUP CREATE <stream> <group> <start_id> MKSTREAM``; False when it existed."""
    try:
        await redis.xgroup_create(stream, group, id=start_id, mkstream=True)
    except redis_errors.ResponseError as error:
        if "BUSYGROUP" in str(error):
            return False
        raise
    return True
