"""The player's-path benchmark's live players (`bench.loadgen`'s ``ws`` and ``setup`` paths,
and `bench.watched`): a seat's live WebSocket, opened as a browser opens it, its moves sent
over it and their answers read from it among the game's pushed events, whose versions tell the
seat when its turn has come."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import msgspec

REPLY_TIMEOUT_S = 10.0
"""How long a move waits for its answer, and a seat for the events before its move."""


class Pushed(msgspec.Struct):
    """What a seat's player reads of a pushed event: its version (the rest is skipped)."""

    version: int = 0


_pushed = msgspec.json.Decoder(Pushed)


class LiveSeat:
    """A seat's live WebSocket: a reader task hands answers to the waiting move and notes the
    version of each pushed event (a frontend renders them, and learns from them that its turn
    has come)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pushed = 0
        self.version = 0  # the last event pushed to this seat
        self.awaited: tuple[int, asyncio.Future[None]] | None = None
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for text in self.socket:
                if text.startswith('{"answer"'):
                    answer = json.loads(text)["answer"]
                    waiter = self.waiting.pop(answer["command_id"], None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(answer)
                else:
                    self.pushed += 1
                    self.version = max(self.version, _pushed.decode(text).version)
                    awaited = self.awaited
                    if awaited and self.version >= awaited[0] and not awaited[1].done():
                        awaited[1].set_result(None)

    async def reached(self, version: int) -> None:
        """Once the seat has been pushed the game's events up to ``version``: a player moves
        once it sees its turn has come, not as soon as the previous move was answered."""
        if self.version >= version:
            return
        arrived = asyncio.get_running_loop().create_future()
        self.awaited = (version, arrived)
        try:
            await asyncio.wait_for(arrived, REPLY_TIMEOUT_S)
        finally:
            self.awaited = None

    async def send(self, command_id: str, body: bytes) -> dict[str, Any]:
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[command_id] = waiter
        await self.socket.send(b'{"command_id":"%s","command":%s}' % (command_id.encode(), body))
        return await asyncio.wait_for(waiter, REPLY_TIMEOUT_S + 5)  # the gateway's 504 first

    async def close(self) -> None:
        self.reader.cancel()
        with contextlib.suppress(BaseException):
            await self.reader
        with contextlib.suppress(Exception):
            await self.socket.close()


def live_socket(config: dict[str, Any], game_id: str, token: str) -> Any:
    """A seat's live WebSocket, opened as a browser opens it: compression offered, no pings
    of its own (the server pings). Awaited, or entered with ``async with``."""
    from websockets.asyncio.client import connect

    host, port = config["host"], config["port"]
    url = f"ws://{host}:{port}/games/{game_id}/live?token={token}"
    return connect(url, compression="deflate", ping_interval=None, max_queue=None)
