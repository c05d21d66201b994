"""How a long-running service process starts and stops: logging configured once, then its main
coroutine run until SIGINT or SIGTERM sets the ``stop`` event it is handed (so it finishes the
batch in hand, acknowledges it and closes its connections instead of being cancelled).

Every service's loop is uvloop's (`serve_forever`), as the gateway's is under uvicorn: the
standard library's selector loop spent a third of the rules service's CPU at one game in its
own polling and callbacks."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import uvloop

from gameserver.runtime.logging import configure_logging

Main = Callable[[asyncio.Event], Awaitable[None]]


async def until_signalled(main: Main) -> None:
    """Run ``main(stop)``; SIGINT and SIGTERM set ``stop``."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await main(stop)


async def pause(stop: asyncio.Event, seconds: float) -> None:
    """Wait ``seconds``, or less if ``stop`` is set meanwhile (a service's loop between two
    turns: it stops at once when told to)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stop.wait()


def run_service(service: str, log_level: str, main: Main) -> None:
    """Blocking entry point of ``renature serve <service>``."""
    configure_logging(log_level, service=service)
    serve_forever(until_signalled(main))


def serve_forever(main: Coroutine[Any, Any, None]) -> None:
    """Run a service's main coroutine to its end on a uvloop event loop (blocking)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)
