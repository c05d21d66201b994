"""A live WebSocket's frames written to the socket together: a move's events in one write.

A move appends one to four events (1.6 on average in the bench's games), and every seat's
socket gets each as a frame of its own. Sent one by one through ASGI, each frame was a write
to the socket of its own, and the writes were the largest single cost of the gateway over the
WebSocket: a fifth of its CPU at 256 games in `make bench` (on loopback a write also does the
receiving side's TCP work).

ASGI sends one WebSocket message per ``websocket.send``. `FramesAtOnce`, the gateway's
WebSocket protocol (uvicorn's sans-I/O one, `uvicorn_options`), declares the scope extension
`FRAMES`: it also takes a ``websocket.send`` with ``texts``, a list of text messages, each
framed as ever and all written to the socket in one call (`FramesAtOnce.write_now`; a socket
closing or with a frame of websockets' in hand sends them uvicorn's way, one by one). Nothing
changes on the wire but the number of writes: a client reads the same frames, in the same
order.

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

What a client sends takes the same short way in (`FramesAtOnce.data_received`): where the
socket is open, websockets holds no part of a frame and no fragmented message, and the bytes
that came begin with complete, masked, unfragmented text frames of valid UTF-8 within the size
limit (a move is one), each is unmasked and handed to the app as uvicorn hands it; the first
byte of anything else (a ping, a close, a fragment, a frame not yet whole, a bad frame) and
everything after it go to websockets, at a frame's boundary, as before.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

try:  # websockets' C unmasking, as its own frames use, where it is built
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

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
        if texts is None:
            await super().send(message)  # uvicorn's own checks and errors
            return
        await self.writable.wait()  # the socket's flow control, as uvicorn's own send waits
        if not self.write_now(texts):  # closing, gone, a frame in hand: uvicorn's way, in order
            for text in texts:
                await super().send({"type": "websocket.send", "text": text})

    def data_received(self, data: bytes) -> None:
        taken = self._take_texts(data) if self._reading_plainly() else 0
        if taken < len(data):
            super().data_received(data[taken:] if taken else data)

    def _reading_plainly(self) -> bool:
        """`_plain`, and websockets holds no part of a frame nor of a fragmented message."""
        return self._plain() and self.conn.current_size is None and not self.conn.reader.buffer

    def _take_texts(self, data: bytes) -> int:
        """Hand the app the complete text frames ``data`` begins with, as uvicorn would; how
        many bytes they took (the rest is websockets')."""
        at, end, limit = 0, len(data), self.conn.max_message_size
        while end - at >= 6:
            length = data[at + 1] ^ 0x80  # a client's frame is masked: 0 to 127 where it is
            if data[at] != 0x81 or length > 126:  # FIN, no RSV bit, text; no 64-bit length
                break
            head = at + 2
            if length == 126:
                length, head = int.from_bytes(data[head : head + 2], "big"), head + 2
            stop = head + 4 + length
            if stop > end or (limit is not None and length > limit):
                break
            try:
                text = apply_mask(data[head + 4 : stop], data[head : head + 4]).decode()
            except UnicodeDecodeError:  # websockets and uvicorn refuse it (1007)
                break
            self.queue.put_nowait({"type": "websocket.receive", "text": text})
            if not self.read_paused:  # as uvicorn: read on once the app has taken it
                self.read_paused = True
                self.transport.pause_reading()
            at = stop
        return at

    def write_now(self, texts: list[str]) -> bool:
        """Write ``texts`` as text frames in one write at once, where the socket is open and
        writable and websockets has no other frame in hand; False (nothing written) elsewhere:
        the caller sends them the ASGI way."""
        if (
            self.disconnected
            or not self.writable.is_set()
            or not self._plain()
            or self.conn.expect_continuation_frame
        ):
            return False
        out = self.conn.data_to_send()  # what websockets queued, if anything, goes first
        for text in texts:
            data = text.encode()
            out.append(_header(len(data)))
            out.append(data)
        self.transport.write(b"".join(out))
        return True

    def _plain(self) -> bool:
        """Accepted and open both ways (no close sent by the app nor exchanged by websockets),
        with no extension to change the frames and no frame logging."""
        conn = self.conn
        return (
            conn.state is State.OPEN
            and not self.close_sent
            and not conn.extensions
            and not conn.debug
        )


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
