"""`live_hub.entries_after`: a channel never passes on another history under versions it sent.

The reader and the stream are stand-ins here (the integration test
``tests/integration/test_live_rewound.py`` crashes a real Redis)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gameserver.gateway import live_hub
from gameserver.gateway.live_hub import Follower, HistoryRewound, entries_after
from gameserver.gateway.live_movers import Item


class Hub:
    catch_ups = 0


def follower(stream: list[Item]) -> tuple[Follower, Any]:
    """A follower of game ``g`` and the backlog reader of ``stream`` (a list it may change)."""
    follower = Follower("g", Hub())  # type: ignore[arg-type]

    async def backlog(last: int) -> list[Item]:
        return [item for item in stream if item[0] > last]

    return follower, backlog


async def taken(entries: Any, count: int) -> list[int]:
    return [(await asyncio.wait_for(anext(entries), 1))[0] for _ in range(count)]


async def test_a_catch_up_that_finds_the_last_entry_passed_on_goes_on() -> None:
    stream = [(1, b"a"), (2, b"b")]
    tracked, backlog = follower(stream)
    entries = entries_after(tracked, backlog, 0)
    assert await taken(entries, 2) == [1, 2]
    stream.append((3, b"c"))
    tracked.fall_behind()  # the reader failed: the stream is read again
    assert await taken(entries, 1) == [3]


@pytest.mark.parametrize(
    "after_crash",
    [
        [(1, b"a")],  # the stream lost version 2
        [(1, b"a"), (2, b"other")],  # version 2 is another event now
    ],
)
async def test_a_catch_up_that_misses_the_last_entry_passed_on_is_history_rewound(
    after_crash: list[Item],
) -> None:
    stream = [(1, b"a"), (2, b"b")]
    tracked, backlog = follower(stream)
    entries = entries_after(tracked, backlog, 0)
    assert await taken(entries, 2) == [1, 2]
    stream[:] = after_crash
    tracked.fall_behind()
    with pytest.raises(HistoryRewound) as rewound:
        await anext(entries)
    assert rewound.value.passed == 2


async def test_the_feed_handing_over_another_event_under_the_last_version_is_history_rewound() -> (
    None
):
    tracked, backlog = follower([(1, b"a"), (2, b"b")])
    entries = entries_after(tracked, backlog, 0)
    assert await taken(entries, 2) == [1, 2]
    tracked.offer((1, b"a"))  # an entry passed on already, handed over late: skipped
    tracked.offer((2, b"other"))
    with pytest.raises(HistoryRewound):
        await anext(entries)


async def test_a_channel_resumed_after_a_version_checks_nothing_it_did_not_send() -> None:
    tracked, backlog = follower([(1, b"a"), (2, b"b"), (3, b"c")])
    entries = entries_after(tracked, backlog, 2)
    assert await taken(entries, 1) == [3]


async def test_a_follower_tells_whether_the_next_version_is_handed_over_already() -> None:
    tracked, _ = follower([])
    assert not tracked.next_is(1)  # nothing yet: a batch is sent now, not held
    tracked.offer((1, b"a"))
    tracked.offer((2, b"b"))
    assert tracked.next_is(1)
    assert not tracked.next_is(2)
    assert await tracked.get() == (1, b"a")
    assert tracked.next_is(2)
    tracked.fall_behind()  # the stream is read again: nothing is held for the queue
    assert not tracked.next_is(2)


async def test_a_full_follower_falls_behind_and_still_wakes() -> None:
    tracked, _ = follower([])
    for version in range(1, live_hub.QUEUE + 2):
        tracked.offer((version, b"x"))
    assert tracked.lagging
    assert len(tracked.entries) == live_hub.QUEUE
    waiting = asyncio.ensure_future(tracked.get())  # entries there: no wait
    assert await asyncio.wait_for(waiting, 1) == (1, b"x")


async def test_a_waiting_follower_wakes_for_the_next_entry_and_for_a_fall_behind() -> None:
    tracked, _ = follower([])
    waiting = asyncio.ensure_future(tracked.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    tracked.offer((1, b"a"))
    assert await asyncio.wait_for(waiting, 1) == (1, b"a")
    waiting = asyncio.ensure_future(tracked.get())
    await asyncio.sleep(0)
    tracked.fall_behind()
    assert await asyncio.wait_for(waiting, 1) == live_hub.WAKE
