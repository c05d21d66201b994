"""The services' garbage collector settings (gameserver.runtime.collector): what is alive at
start-up is frozen out of the collector's walks and young collections are far rarer, while a
reference cycle made afterwards is still collected, by the collector's own schedule."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from gameserver.runtime import collector


@pytest.fixture
def restored() -> Iterator[None]:
    """This test process's own collector settings, put back afterwards."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_tune_freezes_the_start_up_heap_and_spaces_young_collections(restored: None) -> None:
    alive = Node()  # alive at start-up: frozen, out of every collection's walk
    collector.tune()
    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(alive)
    assert all(alive is not o for o in gc.get_objects())  # the frozen are walked no more
    assert gc.get_threshold() == (collector.YOUNG, *collector.OLDER)


def test_a_cycle_made_while_serving_is_still_collected_by_itself(restored: None) -> None:
    """No ``gc.collect()`` here: allocations past the young threshold trigger a collection on
    their own, as they do in a service (a tuning that turned the collector off fails)."""
    collector.tune()
    one, two = Node(), Node()
    one.other, two.other = two, one  # a cycle made while serving
    gone = weakref.ref(one)
    del one, two
    before = gc.get_stats()[0]["collections"]
    kept: list[list[int]] = [
        [] for _ in range(collector.YOUNG * 2)
    ]  # tracked allocations, past the threshold
    assert gc.get_stats()[0]["collections"] > before
    assert gone() is None
    del kept
