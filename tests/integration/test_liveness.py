"""The workers' liveness probe (gameserver.runtime.probe)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from devkit.redis_server import free_port
from eventstore import KeyLayout
from gameserver.runtime import bus
from gameserver.runtime.probe import judge, live, verdict
from gameserver.runtime.settings import Settings


def test_a_consumer_idle_too_long_on_redis_7_2_is_stuck() -> None:
    # XINFO CONSUMERS on Redis 7.2+: idle counts from the last read attempt.
    assert verdict({"name": b"r1", "idle": 500, "inactive": 90_000}, "r1", "rules", 60)[0]
    alive, why = verdict({"name": b"r1", "idle": 61_000, "inactive": 61_000}, "r1", "rules", 60)
    assert not alive
    assert "idle 61 s" in why


def test_nothing_to_judge_by_is_alive() -> None:
    assert verdict(None, "r1", "rules", 60)[0]  # not created yet (fresh Redis)
    # Redis before 7.2: idle counts from the last delivery, which a quiet worker lacks.
    assert verdict({"name": b"r1", "idle": 600_000}, "r1", "rules", 60)[0]


def test_a_rules_consumer_stuck_on_one_of_its_command_streams_is_stuck() -> None:
    fresh = {"name": b"r1", "idle": 500, "inactive": 500}
    stale = {"name": b"r1", "idle": 61_000, "inactive": 61_000}
    streams: dict[str, dict[str, Any] | None] = {f"rn:{{p0{n}}}:commands": fresh for n in range(4)}
    assert judge(streams, "r1", "rules", 60) == (True, "consumer 'r1' read 0.5 s ago (4 streams)")
    alive, why = judge({**streams, "rn:{p02}:commands": stale}, "r1", "rules", 60)
    assert not alive
    assert why.endswith("on rn:{p02}:commands")
    assert judge({"rn:{p00}:commands": None, "rn:{p01}:commands": fresh}, "r1", "rules", 60)[0]


@pytest.mark.redis
def test_the_probe_reads_its_own_consumer_of_its_own_group(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    stream = KeyLayout().command_stream(3)  # one of the rules service's streams
    client.xgroup_create(stream, bus.RULES_GROUP, id="0", mkstream=True)
    client.xadd(stream, {"x": "y"})
    client.xreadgroup(bus.RULES_GROUP, "rules-pod-1", {stream: ">"}, count=1)
    client.close()
    alive, why = live("rules", Settings.of(redis_url=redis_url, consumer="rules-pod-1"), 60)
    assert alive
    assert "no consumer" not in why  # found it (and judged it, or said why it cannot)
    only_3 = Settings.of(redis_url=redis_url, consumer="rules-pod-1", rules_partitions="3")
    assert live("rules", only_3, 60)[0]
    assert "streams" not in live("rules", only_3, 60)[1]  # an instance of partition 3 only
    alive, why = live("rules", Settings.of(redis_url=redis_url, consumer="other"), 60)
    assert "no consumer 'other'" in why


def test_redis_out_of_reach_is_not_the_process_fault() -> None:
    settings = Settings.of(redis_url=f"redis://127.0.0.1:{free_port()}/0", consumer="board-1")
    alive, why = live("board", settings, 60)
    assert alive
    assert "out of reach" in why
