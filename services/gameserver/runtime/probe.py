"""Liveness of the worker services, for Kubernetes exec probes (infra/k8s/services.yaml).

    python -m gameserver.runtime.probe live rules|models|board|score|clock|retention

A worker is alive while it keeps reading its streams (the rules service: every command stream
it is assigned, ``RENATURE_RULES_PARTITIONS``; a subscriber that stopped on one of them is as
stuck as a frozen event loop). From Redis 7.2 on, every read attempt
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
from redis.exceptions import RedisClusterException, RedisError

from eventstore.redis_client import sync_client
from gameserver.runtime import bus
from gameserver.runtime.settings import Settings

UNREACHABLE = (RedisError, RedisClusterException)
"""What Redis out of reach raises (a cluster client's own errors are not `RedisError`s)."""

MAX_IDLE_S = {
    "rules": 60,
    "models": 60,
    "board": 60,
    "score": 60,
    "clock": 60,
    "retention": 600,
}
"""Default limits: a read at least every few seconds (retention: one pass per interval)."""


def streams_and_group(service: str, settings: Settings) -> tuple[list[str], str]:
    """The streams the service reads and its group there: the rules service's command streams
    (one subscriber each), or partition 0's feed, which every read of a feed reader touches,
    since it reads all partitions at once."""
    if service == "rules":
        commands = settings.commands
        return commands.streams(
            commands.parse(settings.consumers.rules_partitions)
        ), bus.RULES_GROUP
    groups = {
        "models": bus.MODELS_GROUP,
        "board": bus.BOARD_GROUP,
        "score": bus.SCORE_GROUP,
        "clock": "clock",
        "retention": "retention",
    }
    return [settings.layout.feed_key(0)], groups[service]


def consumer_info(client: Any, stream: str, group: str, consumer: str) -> dict[str, Any] | None:
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
    """(alive, why): stuck when the consumer is stuck on any of its streams."""
    streams, group = streams_and_group(service, settings)
    try:  # a cluster URL gets a cluster client, which reaches out to the nodes at once
        client = sync_client(settings.store.redis_url, socket_timeout=3, socket_connect_timeout=3)
    except UNREACHABLE as error:
        return True, f"Redis out of reach ({type(error).__name__}): not this process's fault"
    try:
        infos = [
            consumer_info(client, stream, group, settings.consumers.consumer) for stream in streams
        ]
    except UNREACHABLE as error:
        return True, f"Redis out of reach ({type(error).__name__}): not this process's fault"
    finally:
        client.close()
    return judge(
        dict(zip(streams, infos, strict=True)), settings.consumers.consumer, group, max_idle_s
    )


def judge(
    infos: dict[str, dict[str, Any] | None], consumer: str, group: str, max_idle_s: float
) -> tuple[bool, str]:
    """(alive, why) of a consumer from its XINFO CONSUMERS entry on each stream it reads:
    stuck on one is stuck (a subscriber of that stream stopped, or the whole loop froze)."""
    found = None
    for stream, info in infos.items():
        alive, why = verdict(info, consumer, group, max_idle_s)
        if not alive:
            return False, f"{why} on {stream}"
        if info is not None and found is None:
            found = why
    first = found or verdict(None, consumer, group, max_idle_s)[1]
    return True, first if len(infos) == 1 else f"{first} ({len(infos)} streams)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gameserver.runtime.probe")
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
