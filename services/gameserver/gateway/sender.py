"""How the gateway hands a command to the rules service and awaits its reply.

The gateway depends on this small protocol rather than on the bus directly, so the handlers stay
thin and tests can swap the transport. `BusSender` is the real one: it publishes the envelope on
the command stream of its game's partition through ``gameserver.runtime.rules_client.RulesClient``
(one reply channel for the gateway's whole life, replies matched by correlation id).
"""

from __future__ import annotations

from typing import Protocol

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from eventstore import CommandPartitions
from gameserver.runtime.bus import COMMAND_PARTITIONS, CommandEnvelope, Reply
from gameserver.runtime.rules_client import RulesClient


class SenderUnavailableError(Exception):
    """The rules service (or the bus) cannot be reached at all."""


class CommandSender(Protocol):
    async def send(self, envelope: CommandEnvelope, timeout: float) -> Reply:
        """The reply to ``envelope``; raises ``TimeoutError`` when none came in ``timeout``
        seconds and `SenderUnavailableError` when the bus is down."""
        ...


class BusSender:
    """Commands over the Redis bus (a `RulesClient` on the gateway's Redis client: its reply
    channel is subscribed on the first command and kept until `aclose`)."""

    def __init__(self, redis: Redis, *, streams: CommandPartitions = COMMAND_PARTITIONS) -> None:
        self._client = RulesClient(redis, streams=streams)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(self, envelope: CommandEnvelope, timeout: float) -> Reply:
        try:
            return await self._client.send(envelope, timeout)
        except TimeoutError:  # an OSError too, but it means "no answer", not "unreachable"
            raise
        except (redis_errors.ConnectionError, OSError) as error:
            raise SenderUnavailableError(str(error)) from error
