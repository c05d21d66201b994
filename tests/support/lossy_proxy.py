"""A TCP proxy in front of a real Redis that loses one answer on demand: the command reaches
Redis, its answer never reaches the client, and the connection is cut (what a client sees when
a connection fails between its command and the answer)."""

from __future__ import annotations

import asyncio
import contextlib


class LossyProxy:
    """Forwards loopback connections to ``host:port``; `lose_next_answer` drops the next bytes
    Redis sends back on any connection and closes that connection both ways."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.target = port
        self.port = 0
        self.lose_next_answer = False
        self.lost = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> LossyProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.target)
        up = asyncio.ensure_future(self._pipe(reader, upstream_writer, answers=False))
        down = asyncio.ensure_future(self._pipe(upstream_reader, writer, answers=True))
        for task in (up, down):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for task in (up, down):
            task.cancel()
        for end in (writer, upstream_writer):
            with contextlib.suppress(OSError):
                end.close()

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, answers: bool
    ) -> None:
        while data := await source.read(65536):
            if answers and self.lose_next_answer:
                self.lose_next_answer = False
                self.lost += 1
                return  # the answer is dropped and the connection cut
            sink.write(data)
            await sink.drain()
