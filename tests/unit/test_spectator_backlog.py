"""Spectators' backlog turns, the finished games' frames, and live refusals kept in memory."""

from __future__ import annotations

import asyncio

import pytest

from gameserver.gateway.live_admission import LiveRefusals
from gameserver.gateway.refusal_memory import Refused, RefusedUntil
from gameserver.gateway.spectator_backlog import Frames, SpectatorBacklogs
from support.manual_clock import ManualClock


async def test_only_a_few_spectators_hold_a_turn_and_seats_never_wait() -> None:
    backlogs = SpectatorBacklogs(turns=2)
    running = 0
    most = 0

    async def spectator() -> None:
        nonlocal running, most
        async with backlogs.turn(spectator=True):
            running += 1
            most = max(most, running)
            await asyncio.sleep(0)
            running -= 1

    held = [await backlogs.take_turn(True) for _ in range(2)]
    waiting = [asyncio.create_task(spectator()) for _ in range(10)]
    while backlogs.waiting < 10:
        await asyncio.sleep(0)
    async with backlogs.turn(spectator=False):  # a seat's channel: at once, with every turn held
        assert backlogs.waiting == 10
    for give_back in held:
        give_back()
        give_back()  # given back once, however often it is called
    await asyncio.gather(*waiting)
    assert most == 2
    assert backlogs.waiting == 0
    async with backlogs.turn(True), backlogs.turn(True):  # both turns are free again
        pass


async def test_a_finished_games_frames_are_made_once_for_concurrent_channels() -> None:
    backlogs = SpectatorBacklogs(games=2)
    calls = 0
    release = asyncio.Event()

    async def make() -> Frames:
        nonlocal calls
        calls += 1
        await release.wait()
        return [(1, "a"), (2, "b")]

    asking = [asyncio.create_task(backlogs.finished_frames("g", (2, "h2"), make)) for _ in range(5)]
    await asyncio.sleep(0)
    release.set()
    assert all(found == [(1, "a"), (2, "b")] for found in await asyncio.gather(*asking))
    assert await backlogs.finished_frames("g", (2, "h2"), make) == [(1, "a"), (2, "b")]
    assert calls == 1
    assert backlogs.made == 1


async def test_only_the_most_recently_used_finished_games_are_kept() -> None:
    backlogs = SpectatorBacklogs(games=2)

    async def make() -> Frames:
        return [(1, "x")]

    for game in ("a", "b", "a", "c"):  # "b" is the least recently used when "c" comes
        await backlogs.finished_frames(game, (1, "h1"), make)
    assert backlogs.made == 3
    await backlogs.finished_frames("a", (1, "h1"), make)
    assert backlogs.made == 3
    await backlogs.finished_frames("b", (1, "h1"), make)
    assert backlogs.made == 4


async def test_a_game_that_ended_again_at_the_same_version_is_made_anew() -> None:
    """A crash (everysec) took the end back and the game ended again, at the same version
    with other events: the frames of the end that stands, not the lost one's."""
    backlogs = SpectatorBacklogs()
    ends = iter([[(1, "lost")], [(1, "stands")]])

    async def make() -> Frames:
        return next(ends)

    assert await backlogs.finished_frames("g", (1, "first"), make) == [(1, "lost")]
    assert await backlogs.finished_frames("g", (1, "second"), make) == [(1, "stands")]


async def test_a_failed_make_is_not_kept() -> None:
    backlogs = SpectatorBacklogs()

    async def fails() -> Frames:
        raise ConnectionError("redis away")

    async def works() -> Frames:
        return [(1, "x")]

    with pytest.raises(ConnectionError):
        await backlogs.finished_frames("g", (1, "h1"), fails)
    assert await backlogs.finished_frames("g", (1, "h1"), works) == [(1, "x")]


def test_no_turns_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one turn"):
        SpectatorBacklogs(turns=0)


def test_a_cap_refusal_is_remembered_until_its_retry_after_or_a_slot_freed_here() -> None:
    clock = ManualClock()
    memory = LiveRefusals(RefusedUntil(clock))
    memory.raise_if_refused("1.2.3.4", "g1")  # nothing known: no refusal
    memory.at_cap("game", "g1", 10)
    with pytest.raises(Refused) as refused:
        memory.raise_if_refused("1.2.3.4", "g1")
    assert refused.value.retry_after == 10
    memory.raise_if_refused("1.2.3.4", "g2")  # another game is not at its cap
    clock.now += 7
    with pytest.raises(Refused) as refused:
        memory.raise_if_refused("5.6.7.8", "g1")
    assert refused.value.retry_after == 3
    assert memory.refused == 2
    memory.freed("game", "g1")  # this instance gave a lease of g1 back
    memory.raise_if_refused("5.6.7.8", "g1")
    memory.at_cap("address", "1.2.3.4", 10)
    with pytest.raises(Refused):
        memory.raise_if_refused("1.2.3.4", "g2")
    clock.now += 10
    memory.raise_if_refused("1.2.3.4", "g2")  # the Retry-After has passed


def test_an_address_over_its_live_rate_is_refused_from_the_limiters_memory() -> None:
    clock = ManualClock()
    boxed = RefusedUntil(clock)
    memory = LiveRefusals(boxed)
    boxed.refuse(("live", "1.2.3.4"), 30)  # what `Limiter.hit` remembers of the live bucket
    with pytest.raises(Refused):
        memory.raise_if_refused("1.2.3.4", None)
    memory.freed("seat", "g1:abc")  # a seat's lease is no cap of the spectators'
    memory.at_cap("seat", "g1:abc", 10)
    memory.raise_if_refused("9.9.9.9", "g1")
