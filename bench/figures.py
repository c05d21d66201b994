"""The figures the benches print: percentiles of samples (nearest rank) in milliseconds, the CPU
seconds of a process, how busy the whole machine was (and how much the hypervisor stole), and
what every load measures (`Measurement`: round trips, and the probes of the read models)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eventstore import KeyLayout


def stat_fields(path: Path) -> list[str] | None:
    """A ``/proc/<pid>/stat``'s fields after the command's name (None: the process is gone)."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def stat_cpu(fields: list[str]) -> float:
    """User + system CPU seconds in a `stat_fields`, the ended children's included. The
    children count: Redis rewrites its AOF in a fork that writes its whole data set, which was
    a third of Redis's own CPU over a player run (a child's time is counted once it has ended
    and been waited for, as Redis does)."""
    return sum(stat_parts(fields))


def stat_parts(fields: list[str]) -> tuple[float, float]:
    """`stat_cpu` in two: the process's own CPU seconds, and its ended children's."""
    own, children = (int(fields[a]) + int(fields[a + 1]) for a in (11, 13))  # u+s, cu+cs
    tick = os.sysconf("SC_CLK_TCK")
    return own / tick, children / tick


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process so far (`stat_cpu`; Linux /proc, 0 elsewhere)."""
    return sum(cpu_parts(pid))


def cpu_parts(pid: int) -> tuple[float, float]:
    """`cpu_seconds` in two (`stat_parts`): the process's own, its ended children's."""
    fields = stat_fields(Path(f"/proc/{pid}/stat"))
    return (0.0, 0.0) if fields is None else stat_parts(fields)


def percentile(samples: list[float], q: float) -> float:
    """The q-th percentile (0..100) by the nearest-rank method."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def ms(samples: list[float], digits: int = 1) -> str:
    """The p50 and p99 of ``samples`` (seconds) in ms, to ``digits`` decimals."""
    if not samples:
        return "no samples"
    p50, p99 = percentile(samples, 50) * 1e3, percentile(samples, 99) * 1e3
    return f"p50 {p50:.{digits}f} ms, p99 {p99:.{digits}f} ms ({len(samples)} samples)"


def machine_ticks() -> tuple[int, int, int]:
    """(busy, steal, total) clock ticks of the whole machine so far (Linux /proc/stat)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0, 0
    idle = fields[3] + fields[4]  # idle + iowait
    steal = fields[7] if len(fields) > 7 else 0
    total = sum(fields[:8])
    return total - idle - steal, steal, total


def machine_line(before: tuple[int, int, int]) -> str:
    busy, steal, total = (now - then for now, then in zip(machine_ticks(), before, strict=True))
    if total <= 0:
        return "  machine: (no /proc/stat)"
    return f"  machine: {busy / total:.0%} busy, {steal / total:.0%} stolen by the hypervisor"


PROBES = 4
"""Read-model probes in flight at most, per load."""
PROBE_EVERY = 16
"""Every sixteenth command of a game is probed (every fourth until stop 41: the probes'
polling then spent more of the 2-core machine than the projectors, once they lingered)."""
POLL_S = 0.0005
POLL_SHARE = 0.05
"""A probe reads the model again after 5% of the time since the command was sent (at least
``POLL_S``): the lag is measured within 5%, without reading it hundreds of times."""
PROBE_TIMEOUT_S = 10.0


class Stopping(Exception):
    """The load stops (`Measurement.stopping`): the coroutine playing a game returns before
    its next step."""


@dataclass(kw_only=True)
class Measurement:
    """What a load counts while its game coroutines run: the window of time it measures
    (start, end), whether it stops, the games finished, each command's round trip and each
    probe's time from a command to its read model (seconds), the probes in flight and the
    numbers that name commands."""

    window: tuple[float, float] = (float("inf"), float("inf"))
    stopping: bool = False
    games_finished: int = 0
    ended_in_window: int = 0
    """Games that ended inside the window, each followed by a spare set up before it
    (`bench.spares`), or, once the spares ran out, by a game set up inside it."""
    set_ups_in_window: int = 0
    """Games set up inside the window (the spares ran out): their set-ups count in its CPU."""
    round_trips: list[float] = field(default_factory=list)
    to_model: list[float] = field(default_factory=list)
    probes: set[asyncio.Task[None]] = field(default_factory=set)
    ids: Iterator[int] = field(default_factory=itertools.count)
    clock: Callable[[], float] = time.monotonic
    """The clock the load's times are read on (a probe's ``sent`` included)."""

    def game_ended(self) -> None:
        """A game played to its end (a spare, or a game set up then, follows it)."""
        self.games_finished += 1
        self.ended_in_window += self.window[0] <= self.clock() < self.window[1]

    def set_up(self, began: float) -> None:
        """A game set up from ``began`` until now by a coroutine whose game ended (none before
        the window is known): counted where any of it fell inside the window."""
        self.set_ups_in_window += began < self.window[1] and self.window[0] <= self.clock()

    def probe(
        self, number: int, redis: Any, layout: KeyLayout, game_id: str, version: int, sent: float
    ) -> None:
        """Time the game's board read model (``layout``'s key, a hash with a ``version``) until
        it shows ``version``, for every `PROBE_EVERY`-th command of a game (its step
        ``number``) while fewer than `PROBES` are in flight."""
        if number % PROBE_EVERY or len(self.probes) >= PROBES:
            return
        key = layout.model_key("board", game_id)
        task = asyncio.create_task(self._watch(redis, key, version, sent))
        self.probes.add(task)
        task.add_done_callback(self.probes.discard)

    async def _watch(self, redis: Any, key: str, version: int, sent: float) -> None:
        while (elapsed := self.clock() - sent) < PROBE_TIMEOUT_S:
            stored = await redis.hget(key, "version")
            if stored is not None and int(stored) >= version:
                self.to_model.append(self.clock() - sent)
                return
            await asyncio.sleep(max(POLL_S, elapsed * POLL_SHARE))

    async def probes_landed(self, timeout: float) -> None:
        """Until the probes in flight have seen their read models, ``timeout`` at the most."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self.probes), timeout=timeout)


async def cancelled(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
