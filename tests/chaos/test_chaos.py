"""A short chaos run in the test suite: every fault kind once under the durable mode.

Redis and the services run as separate processes; HTTP clients play games while each service
is SIGKILLed and SIGSTOPped, Redis is killed and restarted from its append-only file and a power
cut is emulated. The checker then holds the whole history to the promise: nothing acknowledged
lost, no fork, no gap, no command id twice, read models equal a fresh replay, every finished
game audits, every started game finished, no 500, no service exiting on its own; every key sent
again with another body refused (422) with nothing changed, and no 5xx from the long-lived
gateway or the clients later than a second after Redis answers again. The long run
with its figures is ``make chaos`` (tests/chaos/chaos_harness.py).
"""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from chaos_harness import (
    Ack,
    Answer5xx,
    AofSample,
    ChaosConfig,
    RedisBack,
    Report,
    Stall,
    cut_back,
    run_chaos,
)

from devkit.requirements import require_redis_server

pytestmark = [pytest.mark.chaos, pytest.mark.e2e, pytest.mark.redis]


async def test_a_short_chaos_run_loses_and_forks_nothing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    require_redis_server()
    logs = tmp_path_factory.mktemp("chaos")
    config = ChaosConfig(
        games=2,
        players=(2, 3),
        rounds=1,
        durability="always",
        fault_interval=1.0,
        stop_seconds=(4.5, 5.5),
        logs=logs,
    )
    report = await run_chaos(config)
    print(report.format())
    assert report.faults, "no fault was injected"
    assert report.acknowledged > 100, report.format()
    assert report.ok, f"{report.format()}\nservice logs: {logs}"
    assert not report.lost
    assert report.redis_backs, "no Redis restart"
    assert not report.late_5xx(), report.format()
    assert report.key_reuses >= 2 * config.games, report.format()
    assert not report.key_reuse_failures, report.format()
    assert all(t != float("inf") for times in report.recovery.values() for t in times)


def test_a_late_5xx_counts_unless_redis_itself_stalled_for_a_second_then() -> None:
    """A 5xx answered 9.5 s after Redis came back is late; the same 5xx answered while Redis's
    own latency monitor saw it stall 6 s (an fsync) is the store's doing, and a short stall
    explains nothing."""
    report = Report(ChaosConfig())
    report.redis_backs = [RedisBack("redis-kill", back=100.0)]
    late = Answer5xx(sent=101.0, answered=109.5, status=503, code="store_unavailable", source="c")
    report.errors = [late]
    assert [error for _, error in report.late_5xx()] == [late]
    report.stalls = [Stall("command", 300, ended=109.0)]
    assert report.late_5xx()
    assert not report.stalled_5xx()
    report.stalls.append(Stall("aof-fsync-always", 6_000, ended=109.0))
    assert not report.late_5xx()
    assert [(error, stall.event) for _, error, stall in report.stalled_5xx()] == [
        (late, "aof-fsync-always")
    ]
    assert "not counted late): 1" in report.format()
    report.stalls = [Stall("aof-fsync-always", 6_000, ended=50.0)]  # long over by then
    assert report.late_5xx()


def test_a_5xx_answered_after_the_next_fault_froze_the_gateway_is_that_faults_doing() -> None:
    """A request sent after Redis came back, held by the gateway across the next fault's
    SIGSTOP and answered 503 when it woke (its Redis reads timed out while it stood still), or
    in flight when the next fault killed Redis, is not late; the same answer before the next
    fault, or after a fault that spares both the gateway and Redis, is."""
    report = Report(ChaosConfig())
    back = RedisBack("redis-kill", back=100.0, until=103.5, next_fault="stop:gateway")
    report.redis_backs = [back]
    woke = Answer5xx(sent=100.5, answered=109.8, status=503, code="store_unavailable", source="c")
    report.errors = [woke]
    assert not report.late_5xx()
    assert "took Redis away (that fault's doing, not counted late): 1" in report.format()
    back.next_fault = "redis-kill"  # Redis killed under the request, then loading its file
    assert not report.late_5xx()
    back.next_fault = "kill:models"
    assert report.late_5xx()
    back.next_fault = "stop:gateway"
    report.errors = [
        Answer5xx(sent=100.5, answered=103.0, status=503, code="store_unavailable", source="c")
    ]
    assert report.late_5xx()


def test_a_power_cut_under_everysec_loses_what_the_file_lacked_a_second_before_it(
    tmp_path: Path,
) -> None:
    """The file is cut back to its size a loss window before the cut. An answer given before
    then is lost only if Redis may have held it in its AOF buffer (a write postponed behind a
    running fsync, for up to 2 s): with no fsync running then, its loss is outside the window."""
    aof = tmp_path / "appendonly.aof.1.incr.aof"

    def cut(fsyncing: bool) -> Any:
        aof.write_bytes(b"x" * 300)
        samples = [
            AofSample(9.0, str(aof), 50, False),
            AofSample(10.0, str(aof), 100, fsyncing),
            AofSample(11.0, str(aof), 200, False),
        ]
        stack = SimpleNamespace(
            samples=lambda: samples, config=ChaosConfig(durability="everysec", loss_window=1.0)
        )
        return cut_back(cast(Any, stack), random.Random(1), 11.5)

    def answered(at: float) -> Ack:
        return Ack("g", "move", "c", 3, 3, at)

    empty = cut(False)
    assert aof.stat().st_size == 100
    assert (empty.at, empty.kept, empty.held_from) == (11.5, 10.0, 10.0)
    assert empty.explains(answered(10.5))
    assert not empty.explains(answered(9.5))
    held = cut(True)
    assert held.held_from == 8.0
    assert held.explains(answered(9.5))
    assert not held.explains(answered(7.5))
    assert not held.explains(answered(13.0))
