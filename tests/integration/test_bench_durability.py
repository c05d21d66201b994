"""What a durable write costs on the machine (`bench.durability.write_cost`), said beside the
round trip of one game alone in `make bench`: measured on real Redis servers of its own, one
with ``appendfsync always`` and one with ``appendfsync no`` in each of two rounds."""

from __future__ import annotations

import math

import pytest
from bench import durability

from devkit.redis_server import RedisServer

pytestmark = pytest.mark.redis


def test_a_durable_write_is_timed_against_an_unsynced_one_on_servers_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[RedisServer] = []

    class Watched(RedisServer):
        def start(self) -> RedisServer:
            started.append(self)
            return super().start()

    monkeypatch.setattr(durability, "RedisServer", Watched)
    monkeypatch.setattr(durability, "ONE_WRITER", 40)
    synced, unsynced = durability.write_cost()
    assert [server.appendfsync for server in started] == ["always", "no", "always", "no"]
    assert all(server.appendonly for server in started)
    assert not any(server.running for server in started)  # each stopped once measured
    for p50 in (synced, unsynced):
        assert math.isfinite(p50)
        assert 0 < p50 < 1000  # milliseconds: a write's round trip, answered
