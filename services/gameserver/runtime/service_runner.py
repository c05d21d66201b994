"""How a long-running service process starts and stops: logging configured once, then its main
coroutine run until SIGINT or SIGTERM sets the ``stop`` event it is handed (so it finishes the
batch in hand, acknowledges it and closes its connections instead of being cancelled)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable

from gameserver.runtime.logging import configure_logging

Main = Callable[[asyncio.Event], Awaitable[None]]


async def until_signalled(main: Main) -> None:
    """Run ``main(stop)``; SIGINT and SIGTERM set ``stop``."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await main(stop)


def run_service(service: str, log_level: str, main: Main) -> None:
    """Blocking entry point of ``renature serve <service>``."""
    configure_logging(log_level, service=service)
    asyncio.run(until_signalled(main))
