"""A minimal HTTP/1.1 keep-alive client for the load processes: one connection, one request at
a time (as a browser tab's fetches), reconnecting when the server closed an idle connection."""

from __future__ import annotations

import asyncio
import contextlib


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
