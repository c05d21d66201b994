"""Liveness of the worker services, for Kubernetes exec probes (infra/k8s/services.yaml).

    python -m renature_services.probe live rules|board|score|clock|retention

A worker is alive while it keeps reading its stream. From Redis 7.2 on, every read attempt
(``XREADGROUP``, blocking or not, even one that gets nothing, or ``XAUTOCLAIM``) resets its
consumer's ``idle`` time in its consumer group (the time since its last delivery is then
``inactive``), so a consumer idle for longer than ``--max-idle`` seconds belongs to a process
whose event loop is stuck; the probe then exits 1 and Kubernetes restarts the container.
Before 7.2 ``idle`` only counts from the last delivery, which a quiet, healthy worker does not
get: there (no ``inactive`` field) the probe cannot judge and says alive. The probe runs as
the service's own Redis user (the same environment) and never fails for what is not the
process's fault:
Redis out of reach (readiness and the services' own reconnects deal with that), or a group or
consumer not there yet (a fresh or flushed Redis: it is created by the next read).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import redis
from redis.exceptions import RedisError

from renature_services import bus
from renature_services.settings import Settings
from renature_store import KeyLayout

MAX_IDLE_S = {"rules": 60, "board": 60, "score": 60, "clock": 60, "retention": 600}
"""Default limits: a read at least every few seconds (retention: one pass per interval)."""


def stream_and_group(service: str, layout: KeyLayout) -> tuple[str, str]:
    """The stream the service reads and its group there (feeds: partition 0's, which every
    read of the service touches, since it reads all partitions at once)."""
    feed = layout.feed_key(0)
    return {
        "rules": (layout.command_stream(), bus.RULES_GROUP),
        "board": (feed, bus.BOARD_GROUP),
        "score": (feed, bus.SCORE_GROUP),
        "clock": (feed, "clock"),
        "retention": (feed, "retention"),
    }[service]


def consumer_info(
    client: redis.Redis, stream: str, group: str, consumer: str
) -> dict[str, Any] | None:
    """The consumer's XINFO CONSUMERS entry, or None when the group or the consumer is not
    there."""
    try:
        consumers = client.xinfo_consumers(stream, group)
    except redis.ResponseError:
        return None
    for info in consumers:
        name = info.get("name")
        if (name.decode() if isinstance(name, bytes) else name) == consumer:
            return dict(info)
    return None


def verdict(
    info: dict[str, Any] | None, consumer: str, group: str, max_idle_s: float
) -> tuple[bool, str]:
    """(alive, why) from the consumer's XINFO CONSUMERS entry."""
    if info is None:
        return True, f"no consumer {consumer!r} in {group} yet"
    if "inactive" not in info:
        return True, "Redis before 7.2: idle counts from the last delivery, nothing to judge by"
    idle = int(info.get("idle", 0))
    if idle > max_idle_s * 1000:
        return False, f"consumer {consumer!r} idle {idle / 1000:.0f} s in {group}"
    return True, f"consumer {consumer!r} read {idle / 1000:.1f} s ago"


def live(service: str, settings: Settings, max_idle_s: float) -> tuple[bool, str]:
    """(alive, why)."""
    layout = KeyLayout(settings.prefix, settings.partitions)
    stream, group = stream_and_group(service, layout)
    client = redis.Redis.from_url(settings.redis_url, socket_timeout=3, socket_connect_timeout=3)
    try:
        info = consumer_info(client, stream, group, settings.consumer)
    except RedisError as error:
        return True, f"Redis out of reach ({type(error).__name__}): not this process's fault"
    finally:
        client.close()
    return verdict(info, settings.consumer, group, max_idle_s)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m renature_services.probe")
    parser.add_argument("check", choices=["live"])
    parser.add_argument("service", choices=sorted(MAX_IDLE_S))
    parser.add_argument("--max-idle", type=float, default=None, help="seconds")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    alive, why = live(args.service, settings, args.max_idle or MAX_IDLE_S[args.service])
    print(f"{args.service}: {'alive' if alive else 'STUCK'}: {why}")
    sys.exit(0 if alive else 1)


if __name__ == "__main__":
    main()
