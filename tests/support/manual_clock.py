"""A clock a test moves by hand, for the parts that take ``clock: Callable[[], float]``
(refusal memory, frame budgets, token caches): ``clock.now += 5`` is five seconds later."""

from __future__ import annotations


class ManualClock:
    """Seconds as a test says they are."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
