"""What a test that hangs is waiting on, written before pytest-timeout fails it.

pytest-timeout (the ``timeout`` setting in pyproject.toml) fails a test that runs too long and
prints the stacks of the process's threads; for a test on an event loop those show only the
loop waiting in ``select``. This reporter writes, a little earlier, the stack of every task of
every running event loop too: the ``await`` each is stuck on. It goes to stderr, which pytest
captures and shows with the failure.

pytest-timeout fails a test once: a test whose teardown then hangs too (an event loop's tasks
that will not be cancelled: seen once) would still hold the run. `GIVE_UP_S` after the timeout
the reporter writes the stacks again and ends the process: under pytest-xdist the worker is
reported crashed and its test failed, and a new worker runs the rest.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import pytest

LEAD_S = 20.0
"""How long before the timeout the stacks are written."""
GIVE_UP_S = 60.0
"""How long after the timeout a test still running ends its process."""


class HangReport:
    """Watches the test running in this process (one at a time) from a thread of its own."""

    def __init__(
        self,
        after_s: float,
        give_up_s: float = float("inf"),
        end_process: Callable[[int], object] = os._exit,
    ) -> None:
        self.after_s = after_s
        self.give_up_s = give_up_s
        self.end_process = end_process
        self.test: str | None = None
        self.started = 0.0
        self.reported = True
        self.written = 0
        """Reports written so far."""
        self._lock = threading.Lock()
        self._closed = threading.Event()
        threading.Thread(target=self._watch, name="hang-report", daemon=True).start()

    def begin(self, test: str) -> None:
        with self._lock:
            self.test, self.started, self.reported = test, time.monotonic(), False

    def end(self) -> None:
        with self._lock:
            self.test, self.reported = None, True

    def close(self) -> None:
        self._closed.set()

    def _watch(self) -> None:
        while not self._closed.wait(1.0):
            with self._lock:
                test = self.test
                running = time.monotonic() - self.started if test is not None else 0.0
                due = not self.reported and running >= self.after_s
                if due:
                    self.reported = True
            if due:
                _write_safely(test, sys.__stderr__ or sys.stderr)
                self.written += 1
            if running >= self.give_up_s:
                err = sys.__stderr__ or sys.stderr
                _write_safely(test, err, past_timeout=True)
                self._closed.set()
                self.end_process(3)


def _write_safely(test: str | None, err: TextIO, *, past_timeout: bool = False) -> None:
    """`_write`, whose failure is written instead of ending the watcher's thread (which would
    then never end the process of a test hung past its timeout)."""
    try:
        _write(test, err, past_timeout=past_timeout)
    except Exception as error:
        print(f"\n===== the hang report of {test} failed: {error!r} =====", file=err)
        err.flush()


def _write(test: str | None, err: TextIO, *, past_timeout: bool = False) -> None:
    said = "is still running past its timeout" if past_timeout else "has run for a long time"
    print(f"\n===== {test} {said}: its threads and tasks =====", file=err)
    faulthandler.dump_traceback(file=err, all_threads=True)
    # By type, not isinstance: the heap holds weak proxies, and isinstance asks a dead one's
    # referent for its class (ReferenceError: it once ended the watcher in CI).
    loops = [o for o in gc.get_objects() if issubclass(type(o), asyncio.AbstractEventLoop)]
    for loop in loops:
        if loop.is_closed() or not loop.is_running():
            continue
        for task in list(asyncio.all_tasks(loop)):
            print(f"--- {task!r}", file=err)
            task.print_stack(file=err)
    err.flush()


def install(config: pytest.Config) -> HangReport | None:
    """A reporter for this process when the run has a timeout (``timeout`` > ``LEAD_S``)."""
    timeout = float(config.getini("timeout") or 0)
    override = config.getoption("timeout", None)
    if override is not None:
        timeout = float(override)
    return HangReport(timeout - LEAD_S, timeout + GIVE_UP_S) if timeout > LEAD_S else None
