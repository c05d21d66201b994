"""How the gateway hands a command to the rules service and awaits its reply.

The gateway depends on this small protocol rather than on the bus directly, so the handlers stay
thin and tests can swap the transport. `BusSender` is the real one: it publishes the envelope on
the command stream through ``renature_services.rules_client.send_command`` (the one way to send
a command and await its ``Reply``).
"""

from __future__ import annotations

from typing import Protocol

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from renature_services.bus import CommandEnvelope, Reply
from renature_services.rules_client import send_command


class SenderUnavailableError(Exception):
    """The rules service (or the bus) cannot be reached at all."""


class CommandSender(Protocol):
    async def send(self, envelope: CommandEnvelope, timeout: float) -> Reply:
        """The reply to ``envelope``; raises ``TimeoutError`` when none came in ``timeout``
        seconds and `SenderUnavailableError` when the bus is down."""
        ...


class BusSender:
    """Commands over the Redis bus (``rules_client.send_command`` with a plain Redis client:
    one short-lived reply channel per request, no broker to keep connected)."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def send(self, envelope: CommandEnvelope, timeout: float) -> Reply:
        try:
            return await send_command(self._redis, envelope, timeout)
        except TimeoutError:  # an OSError too, but it means "no answer", not "unreachable"
            raise
        except (redis_errors.ConnectionError, OSError) as error:
            raise SenderUnavailableError(str(error)) from error
