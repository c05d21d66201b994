"""How a service process runs (gameserver.runtime.service_runner): on uvloop's event loop, its
main coroutine handed a ``stop`` event that SIGTERM sets, so it ends on its own."""

from __future__ import annotations

import asyncio
import os
import signal

import uvloop

from gameserver.runtime.service_runner import serve_forever, until_signalled


def test_a_service_runs_on_uvloop_and_ends_when_sigterm_sets_its_stop() -> None:
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def main(stop: asyncio.Event) -> None:
        seen.append(type(asyncio.get_running_loop()))
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stop.wait(), 10)

    serve_forever(until_signalled(main))
    assert seen == [uvloop.Loop]
