"""The dispute desk's worker processes end with the gateway that started them, however it
ends (a gateway killed outright once left its worker waiting forever, holding 60 MB)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

STARTS_A_DESK = """
import os, sys, time
from gameserver.gateway.disputes import DisputeDesk
desk = DisputeDesk(workers=1)
desk._pool().submit(os.getpid).result(timeout=60)  # the worker is up
print(*desk._pool()._processes, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its reaper is gone too
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_worker_ends_when_its_gateway_is_killed() -> None:
    gateway = subprocess.Popen(
        [sys.executable, "-c", STARTS_A_DESK], stdout=subprocess.PIPE, text=True
    )
    try:
        assert gateway.stdout is not None
        workers = [int(pid) for pid in gateway.stdout.readline().split()]
        assert workers
        assert all(_alive(pid) for pid in workers)
        gateway.send_signal(signal.SIGKILL)
        gateway.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers)
    finally:
        gateway.kill()
        gateway.wait(10)
