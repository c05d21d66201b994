"""The report of a test that runs long: its threads' stacks and, for a test on an event loop,
where each task waits (what pytest-timeout alone would not show)."""

from __future__ import annotations

import asyncio
import weakref

import pytest

from devkit.waiting import eventually
from support.hang_report import HangReport


async def waits_on_a_gate_nobody_opens(gate: asyncio.Event) -> None:
    await gate.wait()


async def test_a_long_test_gets_the_await_each_task_is_stuck_on(
    capfd: pytest.CaptureFixture[str],
) -> None:
    report = HangReport(after_s=0.2)
    report.begin("tests/example.py::test_stuck")
    stuck = asyncio.create_task(waits_on_a_gate_nobody_opens(asyncio.Event()))
    try:  # the reporter looks once a second, from a thread of its own
        await eventually(lambda: report.written == 1, "the report", timeout=20)
    finally:
        report.end()
        report.close()
        stuck.cancel()
    err = capfd.readouterr().err
    assert "tests/example.py::test_stuck has run for a long time" in err
    assert "waits_on_a_gate_nobody_opens" in err  # the task's own stack
    assert "test_a_long_test_gets_the_await_each_task_is_stuck_on" in err  # the test's


class Referent:
    pass


async def test_a_dead_weak_proxy_in_the_heap_does_not_stop_the_report(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``isinstance`` on a weak proxy whose referent is gone raises ``ReferenceError``; the
    report looks for event loops among every object of the heap (CI met one there)."""
    referent = Referent()
    dead = weakref.proxy(referent)
    del referent
    with pytest.raises(ReferenceError):
        isinstance(dead, asyncio.AbstractEventLoop)
    report = HangReport(after_s=0.2)
    report.begin("tests/example.py::test_beside_a_dead_proxy")
    try:
        await eventually(lambda: report.written == 1, "the report", timeout=20)
    finally:
        report.end()
        report.close()
    err = capfd.readouterr().err
    assert "test_beside_a_dead_proxy has run for a long time" in err
    assert "failed" not in err
    assert dead is not None  # held until here


async def test_a_test_that_ends_in_time_gets_no_report(capfd: pytest.CaptureFixture[str]) -> None:
    report = HangReport(after_s=0.5)
    report.begin("tests/example.py::test_quick")
    await asyncio.sleep(0.1)
    report.end()
    await asyncio.sleep(1.5)
    report.close()
    assert "has run for a long time" not in capfd.readouterr().err


async def test_a_test_still_running_long_past_its_timeout_ends_its_process(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """pytest-timeout fails a test once; a teardown that hangs after it would hold the run."""
    ended: list[int] = []
    report = HangReport(after_s=0.2, give_up_s=1.5, end_process=ended.append)
    report.begin("tests/example.py::test_stuck_in_teardown")
    try:
        await eventually(lambda: ended == [3], "the process ended", timeout=20)
    finally:
        report.end()
    err = capfd.readouterr().err
    assert "test_stuck_in_teardown is still running past its timeout" in err
