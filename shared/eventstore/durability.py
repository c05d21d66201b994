"""Durability modes: when an appended command may be acknowledged.

A command is acknowledged (its reply sent) only once Redis has answered its append, and what
that answer promises depends on how Redis persists. The mode is a named setting
(``RENATURE_DURABILITY``) so the promise is chosen, stated and checked rather than implied:

``always``
    One Redis with ``appendonly yes`` and ``appendfsync always``: Redis writes and fsyncs the
    append-only file before it answers a write, so an acknowledged command survives a Redis
    crash, an OS crash and a power cut. Nothing acknowledged is lost. The default, and what the
    production configs in ``infra/`` set.
``replica``
    Redis with at least ``replicas`` replicas: after each write the store waits until that many
    replicas have it before the command is acknowledged: ``WAITAOF 0 <n> <timeout>`` on Redis
    7.2+ (the replicas' own append-only files are fsynced), ``WAIT <n> <timeout>`` before that
    (the replicas hold it in memory: a power cut of the primary loses nothing unless the
    replicas lose power at the same moment). Fewer acknowledgements in time raise
    `NotDurableError`: the command is not acknowledged, and a retry with the same command id
    answers it once it is durable.
``everysec``
    ``appendfsync everysec``: Redis fsyncs once a second. A crash of the Redis process loses
    nothing (the writes are in the kernel already), but an OS crash or a power cut loses the
    acknowledged commands of the last second or so (Redis docs: up to 2 s when the disk is
    slow). Fastest; for development (``make run``) and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from eventstore.redis_values import text


class Durability(StrEnum):
    """How durable a write is before its command is acknowledged (see the module docstring)."""

    ALWAYS = "always"
    REPLICA = "replica"
    EVERYSEC = "everysec"


DEFAULT_DURABILITY: Final = Durability.ALWAYS
DEFAULT_REPLICAS: Final = 1
DEFAULT_WAIT_TIMEOUT_MS: Final = 1000

LOSS_WINDOW: Final = {
    Durability.ALWAYS: "none: every acknowledged command is fsynced before its reply",
    Durability.REPLICA: (
        "none while one replica survives: every acknowledged command is on the replicas "
        "before its reply"
    ),
    Durability.EVERYSEC: (
        "up to about 1 s (2 s on a slow disk) of acknowledged commands on an OS crash or a "
        "power cut; nothing on a crash of the Redis process alone"
    ),
}


def parse_durability(value: str | Durability) -> Durability:
    """The mode named by ``value`` (case-insensitive); ValueError names the choices."""
    try:
        return Durability(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(mode.value for mode in Durability)
        raise ValueError(f"unknown durability mode {value!r}; choose one of {choices}") from None


@dataclass(frozen=True, slots=True)
class DurabilityStatus:
    """What the server does against what the mode needs."""

    mode: Durability
    ok: bool
    statement: str
    """One sentence for logs and start-up output: the promise, or why it is not kept."""


def version_tuple(version: str) -> tuple[int, ...]:
    """``"7.0.15"`` -> ``(7, 0, 15)`` (non-numeric parts count as 0)."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def supports_waitaof(redis_version: str) -> bool:
    """WAITAOF exists from Redis 7.2 on."""
    return version_tuple(redis_version)[:2] >= (7, 2)


async def server_version(redis: Redis) -> str:
    info = await redis.info("server")
    return str(info.get("redis_version", "0"))


# long: three durability modes, each checked against the server and stated in its own words
async def check_durability(redis: Redis, mode: Durability, replicas: int = 1) -> DurabilityStatus:
    """Ask the server whether it keeps the promise of ``mode`` (start-up check, logged).

    ``always`` needs ``appendonly yes`` and ``appendfsync always``; ``replica`` needs
    ``replicas`` connected replicas; ``everysec`` states its loss window. A server that does
    not let this client run ``CONFIG GET`` (an ACL user without it) is reported as unchecked.
    """
    window = LOSS_WINDOW[mode]
    if mode is Durability.REPLICA:
        info = await redis.info("replication")
        connected = int(info.get("connected_slaves", 0))
        version = await server_version(redis)
        how = (
            f"WAITAOF 0 {replicas}"
            if supports_waitaof(version)
            else f"WAIT {replicas} (Redis {version} has no WAITAOF, which needs 7.2: the "
            "replicas hold each acknowledged write in memory, not yet on their disks)"
        )
        ok = connected >= replicas
        return DurabilityStatus(
            mode,
            ok,
            f"durability replica via {how}; {connected} replica(s) connected, {replicas} "
            f"needed; loss window: {window}"
            + ("" if ok else "; commands are refused as not durable until enough replicas are up"),
        )
    try:
        config: dict[Any, Any] = await redis.config_get("append*")
    except redis_errors.ResponseError as error:
        return DurabilityStatus(
            mode, False, f"durability {mode} unchecked (CONFIG GET refused: {error})"
        )
    aof = text(config.get(b"appendonly", config.get("appendonly", b"no")))
    fsync = text(config.get(b"appendfsync", config.get("appendfsync", b"")))
    if mode is Durability.ALWAYS:
        ok = aof == "yes" and fsync == "always"
        statement = f"durability always; loss window: {window}"
        if not ok:
            statement = (
                f"durability always NOT kept: the server runs appendonly {aof}, appendfsync "
                f"{fsync}; set `appendonly yes` and `appendfsync always` in its configuration "
                "(or choose RENATURE_DURABILITY=everysec and accept its loss window)"
            )
        return DurabilityStatus(mode, ok, statement)
    ok = aof == "yes" and fsync in ("everysec", "always")
    statement = (
        f"durability everysec (appendonly {aof}, appendfsync {fsync}); loss window: {window}"
    )
    if aof != "yes":
        statement += "; WITHOUT appendonly a restart of Redis loses everything since the last save"
    return DurabilityStatus(mode, ok, statement)
