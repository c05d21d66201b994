"""Settings of the services, read from the environment (twelve-factor style).

Every service process (rules, board, score, gateway) reads the same variables, so ``serve all``
configures its children by setting the environment rather than by passing flags.

| Variable | Default | Meaning |
|---|---|---|
| ``REDIS_URL`` | ``redis://127.0.0.1:6379/0`` | Redis: bus, store, read models |
| ``RENATURE_PREFIX`` | ``rn`` | key prefix of the event store and read models |
| ``RENATURE_PARTITIONS`` | ``16`` | partition count (part of the key layout) |
| ``RENATURE_COMMAND_PARTITIONS`` | ``4`` | command streams (a divisor of the partitions) |
| ``RENATURE_RULES_PARTITIONS`` | ``all`` | command partitions a rules instance reads: ``0-3,8`` |
| ``RENATURE_CONSUMER`` | ``<host>-<pid>-<random>`` | consumer name in the consumer groups |
| ``RENATURE_LOG_LEVEL`` | ``INFO`` | log level of the JSON logs |
| ``RENATURE_RECLAIM_IDLE_MS`` | ``4000`` | pending entries idle this long are taken over |
| ``RENATURE_DURABILITY`` | ``always`` | ``always``, ``replica`` or ``everysec`` (durability.py) |
| ``RENATURE_DURABILITY_REPLICAS`` | ``1`` | replicas a write waits for under ``replica`` |
| ``RENATURE_ALLOW_CHOSEN_SEEDS`` | off | ``POST /games`` may take a seed (tests, bots) |
| ``RENATURE_REDIS_USER``, ``..._PASSWORD[_FILE]`` | none | this service's ACL user (`redis_auth`) |
| ``RENATURE_RATE_LIMITS`` | on | the gateway's rate limits (``RENATURE_LIMIT_*``: security.md) |
| ``RENATURE_MAX_BODY_BYTES`` | ``65536`` | the largest request body the gateway reads |
| ``RENATURE_TOKEN_TTL_AFTER_END_S`` | ``3600`` | seat tokens lapse this long after the end |
| ``RENATURE_GATEWAY_WORKERS`` | ``1`` | gateway worker processes sharing its port |
| ``RENATURE_ACCESS_LOG`` | ``off`` | uvicorn's access log: ``on``, ``off`` or a sample (0.01) |
| ``RENATURE_TRUSTED_PROXIES`` | none | proxies whose ``X-Forwarded-For`` the gateway believes |
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gameserver.runtime.redis_auth import authenticated_url

if TYPE_CHECKING:  # eventstore imports redis, which the CLI does not load until it must
    from eventstore import CommandPartitions, KeyLayout

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def default_consumer_name() -> str:
    """A consumer name unique per process.

    Two processes sharing a consumer name would share one pending list in the group, and a
    restarted process would inherit entries it never read; host, pid and a random suffix avoid
    both. Entries left pending by a dead consumer are taken over by `XAUTOCLAIM`.
    """
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, slots=True)
class Settings:
    """What every service needs to find Redis and lay out its keys."""

    redis_url: str = DEFAULT_REDIS_URL
    prefix: str = "rn"
    partitions: int = 16
    command_partitions: int = 4  # eventstore.DEFAULT_COMMAND_PARTITIONS
    rules_partitions: str = "all"
    projector_partitions: str = "all"
    """The game partitions (feeds) a projector instance reads: ``all`` or ``0-7,12``."""
    consumer: str = field(default_factory=default_consumer_name)
    log_level: str = "INFO"
    # Well under the gateway's 10 s command timeout: a stalled instance's batch is taken over
    # (and answered) by another one in time; taking a batch twice is harmless (idempotency).
    reclaim_idle_ms: int = 4_000
    reclaim_interval_s: float = 10.0
    cache_games: int = 10_000
    durability: str = "always"
    durability_replicas: int = 1
    # Whoever chooses a seed knows every hand: only test, bot and tournament servers allow it.
    allow_chosen_seeds: bool = False
    # The gateway's limits (docs/security.md); the individual rates are RENATURE_LIMIT_*.
    rate_limits: bool = True
    max_body_bytes: int = 65_536
    token_ttl_after_end_s: int = 3600
    gateway_workers: int = 1
    access_log_sample: float = 0.0
    trusted_proxies: str = ""
    """Addresses or networks (``10.0.0.0/8,127.0.0.1``) of the proxies in front of the gateway
    whose ``X-Forwarded-For`` names the client (`gateway.client_address`); none by default."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from environment variables; keyword ``overrides`` that are not None win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if url := env.get("REDIS_URL"):
            values["redis_url"] = url
        if prefix := env.get("RENATURE_PREFIX"):
            values["prefix"] = prefix
        if partitions := env.get("RENATURE_PARTITIONS"):
            values["partitions"] = int(partitions)
        if commands := env.get("RENATURE_COMMAND_PARTITIONS"):
            values["command_partitions"] = int(commands)
        if assigned := env.get("RENATURE_RULES_PARTITIONS"):
            values["rules_partitions"] = assigned
        if feeds := env.get("RENATURE_PROJECTOR_PARTITIONS"):
            values["projector_partitions"] = feeds
        if consumer := env.get("RENATURE_CONSUMER"):
            values["consumer"] = consumer
        if level := env.get("RENATURE_LOG_LEVEL"):
            values["log_level"] = level.upper()
        if idle := env.get("RENATURE_RECLAIM_IDLE_MS"):
            values["reclaim_idle_ms"] = int(idle)
        if durability := env.get("RENATURE_DURABILITY"):
            values["durability"] = durability.strip().lower()
        if replicas := env.get("RENATURE_DURABILITY_REPLICAS"):
            values["durability_replicas"] = int(replicas)
        if chosen := env.get("RENATURE_ALLOW_CHOSEN_SEEDS"):
            values["allow_chosen_seeds"] = chosen.lower() in ("1", "true", "yes", "on")
        if limits := env.get("RENATURE_RATE_LIMITS"):
            values["rate_limits"] = limits.lower() in ("1", "true", "yes", "on")
        if body := env.get("RENATURE_MAX_BODY_BYTES"):
            values["max_body_bytes"] = int(body)
        if ttl := env.get("RENATURE_TOKEN_TTL_AFTER_END_S"):
            values["token_ttl_after_end_s"] = int(ttl)
        if workers := env.get("RENATURE_GATEWAY_WORKERS"):
            values["gateway_workers"] = max(1, int(workers))
        if access := env.get("RENATURE_ACCESS_LOG"):
            named = {"on": 1.0, "true": 1.0, "off": 0.0, "false": 0.0}
            word = access.strip().lower()
            values["access_log_sample"] = named[word] if word in named else float(word)
        if proxies := env.get("RENATURE_TRUSTED_PROXIES"):
            values["trusted_proxies"] = proxies.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        # Per-service ACL user and password (gameserver.runtime.redis_auth, docs/security.md).
        values["redis_url"] = authenticated_url(values.get("redis_url", DEFAULT_REDIS_URL), env)
        return cls(**values)

    @property
    def layout(self) -> KeyLayout:
        """The key layout every service of the deployment shares."""
        from eventstore import KeyLayout

        return KeyLayout(self.prefix, self.partitions)

    @property
    def commands(self) -> CommandPartitions:
        """The command streams and which game goes to which (senders and rules services)."""
        from eventstore import CommandPartitions

        return CommandPartitions(self.layout, self.command_partitions)

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)
