"""A refused client is refused from memory for as long as its ``Retry-After`` said, then asked
of Redis again (`gameserver.gateway.refusal_memory`)."""

from __future__ import annotations

import pytest

from gameserver.gateway.refusal_memory import Refused, RefusedUntil
from support.manual_clock import ManualClock


def test_a_refused_bucket_is_refused_until_its_retry_after_then_forgotten() -> None:
    clock = ManualClock()
    memory = RefusedUntil(clock)
    memory.raise_if_refused(("read", "10.0.0.1"))  # nothing remembered: passes
    memory.refuse(("read", "10.0.0.1"), 3)
    with pytest.raises(Refused) as refused:
        memory.raise_if_refused(("read", "10.0.0.1"))
    assert refused.value.retry_after == 3
    clock.now += 2.5
    with pytest.raises(Refused) as refused:
        memory.raise_if_refused(("read", "10.0.0.1"))
    assert refused.value.retry_after == 1  # what is left, rounded up, never 0
    memory.raise_if_refused(("read", "10.0.0.2"))  # another address is its own
    memory.raise_if_refused(("seat", "10.0.0.1"))  # and so is another bucket
    clock.now += 0.5
    memory.raise_if_refused(("read", "10.0.0.1"))  # its time is up: Redis decides again
    assert len(memory) == 0


def test_the_memory_is_bounded_and_drops_the_lapsed_first() -> None:
    clock = ManualClock()
    memory = RefusedUntil(clock, most=3)
    memory.refuse(("read", "a"), 1)
    memory.refuse(("read", "b"), 10)
    memory.refuse(("read", "c"), 10)
    clock.now += 2  # a's refusal has lapsed
    memory.refuse(("read", "d"), 10)
    assert len(memory) == 3
    for kept in ("b", "c", "d"):
        with pytest.raises(Refused):
            memory.raise_if_refused(("read", kept))
    memory.refuse(("read", "e"), 10)  # full of live refusals: it starts over
    assert len(memory) == 1
