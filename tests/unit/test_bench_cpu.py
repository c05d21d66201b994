"""The CPU the bench charges a process: its own, and its ended children's apart (Redis's forks,
which rewrite its AOF, shown as a group of their own)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.figures import cpu_parts, stat_parts
from bench.processes import FORKS, snapshot

TICK = os.sysconf("SC_CLK_TCK")


def test_a_stat_line_gives_its_own_and_its_ended_childrens_cpu_apart() -> None:
    fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", "100", "50", "30", "20"]
    assert stat_parts(fields) == (150 / TICK, 50 / TICK)


def test_a_forks_cpu_is_its_parents_once_waited_for_and_shown_as_the_forks() -> None:
    """A process whose child burned CPU and was waited for: the child's CPU is counted, apart
    from the parent's own, in `FORKS`; the parent's name keeps its own only."""
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"subprocess.run([sys.executable, '-c', {burn!r}])\n"
            "print('waited', flush=True)\ntime.sleep(30)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline() == b"waited\n"
        own, forks = cpu_parts(parent.pid)
        assert forks >= 0.25
        assert own < forks
        cpu = snapshot([], {"redis": parent.pid})
        assert cpu == {"redis": own, FORKS: forks}
    finally:
        parent.kill()
        parent.wait()


def test_a_process_gone_counts_nothing() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    time.sleep(0.05)
    assert cpu_parts(gone.pid) == (0.0, 0.0)
