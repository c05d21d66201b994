"""What clients send a real Redis, as its MONITOR shows it: the tests that count round trips."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import redis.asyncio as aioredis


@dataclass
class Sent:
    """The commands clients sent while watched: where each came from and its name (a script's
    own calls left out)."""

    commands: list[tuple[str, str]] = field(default_factory=list)

    def names(self, at: set[str] | None = None) -> list[str]:
        """The names, in order, of the commands sent from ``at`` (addresses; all if None)."""
        return [name for where, name in self.commands if at is None or where in at]


async def addresses(redis: aioredis.Redis, name: str) -> set[str]:
    """The addresses of the connections whose client name is ``name``."""
    return {c["addr"] for c in await redis.client_list() if c.get("name") == name}


@contextlib.asynccontextmanager
async def watching(redis: aioredis.Redis) -> AsyncIterator[Sent]:
    """Watch what clients send ``redis``'s server until the block ends (a final ``PING`` from
    ``redis`` marks the end, so nothing sent inside the block is missed)."""
    where = redis.connection_pool.connection_kwargs
    watcher = aioredis.Redis(host=where["host"], port=where["port"])
    sent = Sent()
    try:
        async with watcher.monitor() as monitor:
            listening = asyncio.ensure_future(_listen(monitor, sent))
            try:
                yield sent
                await redis.echo("end-of-watch")
                await asyncio.wait_for(_seen(sent, "ECHO"), timeout=5)
            finally:
                listening.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listening
    finally:
        await watcher.aclose()
    sent.commands = [c for c in sent.commands if c[1] != "ECHO"]


async def _listen(monitor: aioredis.client.Monitor, sent: Sent) -> None:
    async for command in monitor.listen():
        if command.get("client_type") != "lua":
            at = f"{command.get('client_address')}:{command.get('client_port')}"
            sent.commands.append((at, command["command"].split(" ", 1)[0].upper()))


async def _seen(sent: Sent, name: str) -> None:
    while name not in sent.names():
        await asyncio.sleep(0.01)
