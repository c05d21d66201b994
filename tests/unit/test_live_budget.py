"""Spectators' live frames share a budget a second; seats' never wait
(`gameserver.gateway.live_budget`)."""

from __future__ import annotations

import asyncio

import pytest

from gameserver.gateway.live_budget import FrameBudget, pace
from support.manual_clock import ManualClock


def test_a_burst_goes_at_once_then_frames_wait_their_turn_at_the_rate() -> None:
    clock = ManualClock(50.0)
    budget = FrameBudget(100, burst_s=0.1, clock=clock)  # 10 ms a frame, 100 ms of burst
    delays = [budget.delay() for _ in range(15)]
    assert delays[:11] == [0.0] * 11  # the burst: 0.1 s worth of frames (and the first)
    assert delays[11:] == pytest.approx([0.01, 0.02, 0.03, 0.04])
    clock.now += 10  # a quiet spell gives the burst back, never more
    assert [budget.delay() for _ in range(11)] == [0.0] * 11
    assert budget.delay() == pytest.approx(0.01)


def test_a_rate_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive rate"):
        FrameBudget(0)


def test_only_spectators_are_paced() -> None:
    clock = ManualClock(50.0)
    budget = FrameBudget(1, burst_s=0.0, clock=clock)

    async def frames() -> None:
        await pace(budget, 0)  # a seat: never waits, books nothing
        await pace(budget, None)  # the first spectator frame: at once
        await pace(None, None)  # no budget (rate limits off): at once
        assert budget.waited == 0
        assert budget.delay() == pytest.approx(1.0)  # the next spectator frame's turn

    asyncio.run(frames())
