"""Waiting for a condition, always with a deadline.

A test that waits without one hangs the whole suite when the condition never comes; these
helpers fail it instead, saying what did not happen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str,
    *,
    timeout: float = 5.0,
    interval: float = 0.02,
) -> None:
    """Wait until ``condition()`` (plain or awaitable) is true; AssertionError after
    ``timeout`` seconds, naming ``what`` was waited for."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if await result if isinstance(result, Awaitable) else result:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(interval)
