"""The load processes' connections to the gateway: a minimal HTTP/1.1 keep-alive client (`Http`:
one connection, one request at a time, as a browser tab's fetches, reconnecting when the server
closed an idle connection) and a seat's live WebSocket (`LiveSeat`, opened by `live_socket`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any

ANSWER_WAIT_S = 15.0
"""How long a move sent over a live socket waits for its answer: longer than the load's reply
timeout (`bench.loadgen.REPLY_TIMEOUT_S`, 10 s), so that the gateway's 504 comes first."""


class HttpError(RuntimeError):
    pass


class Http:
    """One keep-alive connection, one request at a time (as a browser tab's fetches)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", token: str | None = None, key: str = ""
    ) -> tuple[int, bytes]:
        reused = self._writer is not None
        try:
            return await self._request(method, path, body, token, key)
        except (asyncio.IncompleteReadError, ConnectionError):
            if not reused:
                raise
            await self.close()  # the server closed an idle keep-alive connection: reconnect
            return await self._request(method, path, body, token, key)

    async def _request(
        self, method: str, path: str, body: bytes, token: str | None, key: str
    ) -> tuple[int, bytes]:
        if self._writer is None or self._reader is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        if key:  # a creation or a join retried after a timeout answers the first outcome
            auth += f"Idempotency-Key: {key}\r\n"
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self._writer.write(head.encode() + body)
        raw = await self._reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        length = 0
        for line in raw.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self._reader.readexactly(length)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        self._reader = self._writer = None


class LiveSeat:
    """A seat's live WebSocket: a reader task hands answers to the waiting move and drops the
    pushed events (as a frontend would render them)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pushed = 0
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

    async def send(self, command_id: str, body: bytes) -> dict[str, Any]:
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[command_id] = waiter
        message = b'{"command_id":"%s","command":%s}' % (command_id.encode(), body)
        await self.socket.send(message.decode())  # a text frame, as a browser sends JSON
        return await asyncio.wait_for(waiter, ANSWER_WAIT_S)

    async def close(self) -> None:
        self.reader.cancel()
        with contextlib.suppress(BaseException):
            await self.reader
        with contextlib.suppress(Exception):
            await self.socket.close()


def live_socket(config: Mapping[str, Any], game_id: str, token: str | None = None) -> Any:
    """A seat's live WebSocket (a spectator's without ``token``) on the gateway at the load's
    ``config`` (its ``host`` and ``port``), opened as a browser opens it: compression offered,
    no pings of its own (the server pings). Awaited, or entered with ``async with``."""
    from websockets.asyncio.client import connect

    host, port = config["host"], config["port"]
    query = "" if token is None else f"?token={token}"
    url = f"ws://{host}:{port}/games/{game_id}/live{query}"
    return connect(url, compression="deflate", ping_interval=None, max_queue=None)


async def read_to(socket: Any, version: int) -> None:
    """Read a live socket's pushes until the event of ``version`` (a game's start: the backlog
    of a socket just opened)."""
    while json.loads(await socket.recv())["version"] < version:
        pass
