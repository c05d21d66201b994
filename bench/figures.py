"""The figures the benches print: percentiles of samples (nearest rank) in milliseconds, the CPU
seconds of a process, and how busy the whole machine was (and how much the hypervisor stole)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


@dataclass(kw_only=True)
class Measurement:
    """What a load counts while its game coroutines run: the window of time it measures
    (start, end), whether it stops, the games finished, each command's round trip and each
    probe's time from a command to its read model (seconds), the probes in flight and the
    numbers that name commands."""

    window: tuple[float, float] = (float("inf"), float("inf"))
    stopping: bool = False
    games_finished: int = 0
    round_trips: list[float] = field(default_factory=list)
    to_model: list[float] = field(default_factory=list)
    probes: set[asyncio.Task[None]] = field(default_factory=set)
    ids: Iterator[int] = field(default_factory=itertools.count)

    async def probes_landed(self, timeout: float) -> None:
        """Until the probes in flight have seen their read models, ``timeout`` at the most."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self.probes), timeout=timeout)


async def cancelled(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
