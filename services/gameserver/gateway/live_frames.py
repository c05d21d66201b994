"""A live WebSocket's frames written to the socket together: a move's events in one write.

A move appends one to four events (1.6 on average in the bench's games), and every seat's
socket gets each as a frame of its own. Sent one by one through ASGI, each frame was a write
to the socket of its own, and the writes were the largest single cost of the gateway over the
WebSocket: a fifth of its CPU at 256 games in `make bench` (on loopback a write also does the
receiving side's TCP work).

ASGI sends one WebSocket message per ``websocket.send``. `FramesAtOnce`, the gateway's
WebSocket protocol (uvicorn's sans-I/O one, `uvicorn_options`), declares the scope extension
`FRAMES`: it also takes a ``websocket.send`` with ``texts``, a list of text messages, framed
one by one as ever and written to the socket in one call. Nothing changes on the wire but the
number of writes: a client reads the same frames, in the same order.

The frames go uncompressed (``ws_per_message_deflate`` off in `uvicorn_options`). Every browser
offers permessage-deflate, and uvicorn accepted it: each frame then went through zlib on the
gateway, with a compressor and its window kept for every open socket. With the bench's players
offering it as a browser does, the gateway spent 0.39-0.55 ms of CPU a move at 256 games with
it against 0.31-0.40 ms without it, runs alternated (docs/services.md, stop 44). A move's
frames are a few hundred bytes of JSON; engine.io, under boardgame.io's socket.io, leaves the
extension off by default (and compresses nothing under 1 KB where it is on). And a compressor
shared by the frames of one socket mixes what others chose (a name, a move) with what only that
seat sees: compressed lengths are a way to guess at it that plain frames do not open.

`send_texts` is the app's side: it sends a list that way where the server declared the
extension, and one message at a time elsewhere (another ASGI server, a test client).

The extension also carries ``write``, the protocol's `FramesAtOnce.write_now`: where the socket
is open and writable and nothing else is under way on it (no fragmented message, no extension,
no frame logging), the frames are put together and written there and then, without the ASGI
message passing through Starlette's checks, uvicorn's dispatch and websockets' frame objects
(a server's text frame is two to ten bytes of header and the text). Anything else, a closing or
closed socket included, goes the ASGI way as before, with its errors. That machinery was about
a tenth of the gateway's CPU per move over the WebSocket in `make bench`; the frames on the
wire are the same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.protocol import State

FRAMES = "renature.websocket.texts"
"""The scope extension: ``websocket.send`` may carry ``texts`` instead of ``text``."""


class FramesAtOnce(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol that writes a message's ``texts`` at once."""

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # none where the handshake was refused
        if scope is not None:  # the app runs later: it sees the extension
            scope["extensions"][FRAMES] = {"write": self.write_now}

    async def send(self, message: Any) -> None:
        texts = message.get("texts") if message["type"] == "websocket.send" else None
        if texts is None or not self._open():
            await super().send(message)  # uvicorn's own checks and errors
            return
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        try:
            for text in texts:
                self.conn.send_text(text.encode())
        except InvalidState as error:
            raise ClientDisconnected() from error
        self.transport.write(b"".join(self.conn.data_to_send()))

    def write_now(self, texts: list[str]) -> bool:
        """Write ``texts`` as text frames in one write at once, where the socket is open and
        writable and websockets has no other frame in hand; False (nothing written) elsewhere:
        the caller sends them the ASGI way."""
        conn = self.conn
        if (
            self.disconnected
            or not self.writable.is_set()
            or not self._open()
            or conn.state is not State.OPEN
            or conn.expect_continuation_frame
            or conn.extensions
            or conn.debug
        ):
            return False
        out = conn.data_to_send()  # what websockets queued, if anything, goes first
        for text in texts:
            data = text.encode()
            out.append(_header(len(data)))
            out.append(data)
        self.transport.write(b"".join(out))
        return True

    def _open(self) -> bool:
        """Accepted, neither closing nor answering the handshake with an HTTP response."""
        return self.handshake_complete and not self.close_sent and self.initial_response is None


def _header(length: int) -> bytes:
    """A server's text frame's header (FIN, no mask) for a text of ``length`` bytes."""
    if length < 126:
        return bytes((0x81, length))
    if length < 65536:
        return struct.pack("!BBH", 0x81, 126, length)
    return struct.pack("!BBQ", 0x81, 127, length)


async def send_texts(websocket: WebSocket, texts: list[str]) -> None:
    """Send ``texts`` as text messages, in order: in one write where the server can (at once
    through its ``write`` where the socket allows it)."""
    extension = websocket.scope.get("extensions", {}).get(FRAMES)
    if extension is not None:
        write: Callable[[list[str]], bool] = extension["write"]
        if write(texts):
            return
        if len(texts) > 1:
            await websocket.send({"type": "websocket.send", "texts": texts})
            return
    for text in texts:
        await websocket.send_text(text)
