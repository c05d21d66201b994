"""The figures the benches print: percentiles of samples (nearest rank) in milliseconds, the CPU
seconds of a process, and how busy the whole machine was (and how much the hypervisor stole)."""

from __future__ import annotations

import os
from pathlib import Path


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


def ms(samples: list[float]) -> str:
    if not samples:
        return "no samples"
    return (
        f"p50 {percentile(samples, 50) * 1e3:.1f} ms, p99 {percentile(samples, 99) * 1e3:.1f} ms "
        f"({len(samples)} samples)"
    )


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
