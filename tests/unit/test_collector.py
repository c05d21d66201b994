"""The services' garbage collector settings (gameserver.runtime.collector): what is alive at
start-up is frozen out of the collector's walks and young collections are far rarer, while a
reference cycle made afterwards is still collected."""

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
    collector.tune()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (collector.YOUNG, *collector.OLDER)
    one, two = Node(), Node()
    one.other, two.other = two, one  # a cycle made while serving
    gone = weakref.ref(one)
    del one, two
    gc.collect()
    assert gone() is None  # still collected
