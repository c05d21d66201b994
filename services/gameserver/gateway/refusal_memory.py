"""Refusals remembered in process: a client over a limit is refused without asking Redis again.

Once the shared counters in Redis said a bucket is used up and the client was told to retry
after N seconds, every further request of that bucket within those N seconds is refused from
memory: no round trip, no script, no window arithmetic. A flood that ignores ``Retry-After``
then costs the gateway a dictionary lookup a request instead of two or three Redis round trips,
while a client that waits as told meets Redis again. Each instance remembers only what it was
told itself (another instance may still count a request or two, as the sliding windows allow).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

MOST = 100_000
"""Remembered clients at most; past it the lapsed ones are dropped (and, if need be, all)."""


class Refused(Exception):
    """Over a limit: retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


class RefusedUntil:
    """Buckets (a bucket name and its identity) refused until a moment of ``clock``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, most: int = MOST) -> None:
        self._clock = clock
        self._most = most
        self._until: dict[tuple[str, ...], float] = {}

    def refuse(self, key: tuple[str, ...], retry_after: int) -> None:
        """``key`` was refused, to be retried after ``retry_after`` seconds."""
        now = self._clock()
        if len(self._until) >= self._most:
            self._until = {k: t for k, t in self._until.items() if t > now}
            if len(self._until) >= self._most:
                self._until.clear()
        self._until[key] = now + retry_after

    def raise_if_refused(self, key: tuple[str, ...]) -> None:
        """`Refused` (with the seconds left) while ``key`` is remembered refused."""
        until = self._until.get(key)
        if until is None:
            return
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return
        raise Refused(max(1, math.ceil(left)))

    def forget(self, key: tuple[str, ...]) -> None:
        """``key`` is no longer refused (whatever it was told)."""
        self._until.pop(key, None)

    def __len__(self) -> int:
        return len(self._until)
