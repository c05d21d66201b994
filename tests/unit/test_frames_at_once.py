"""The live WebSocket's frames written at once (`gateway.live_frames`): the same bytes as
websockets frames them, at every length's header size; anything the protocol must handle itself
goes the ASGI way."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.frames import Frame, Opcode

from gameserver.gateway import live_frames
from gameserver.gateway.live_frames import FRAMES, send_texts


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
def test_a_text_frame_is_the_bytes_websockets_writes(length: int) -> None:
    text = "é" * (length // 2) + "x" * (length % 2)  # two bytes each in UTF-8
    data = text.encode()
    assert len(data) == length
    expected = Frame(Opcode.TEXT, data).serialize(mask=False)
    assert live_frames._header(len(data)) + data == expected


class FakeSocket:
    """What `send_texts` uses of Starlette's WebSocket: its scope and its ASGI sends."""

    def __init__(self, write: Any) -> None:
        self.scope: dict[str, Any] = {"extensions": {FRAMES: {"write": write}}}
        self.sent: list[Any] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def send_text(self, text: str) -> None:
        self.sent.append(text)


async def test_texts_go_through_the_protocols_write_where_it_takes_them() -> None:
    written: list[list[str]] = []

    def write(texts: list[str]) -> bool:
        written.append(texts)
        return True

    socket = FakeSocket(write)
    await send_texts(socket, ["a"])  # type: ignore[arg-type]
    await send_texts(socket, ["b", "c"])  # type: ignore[arg-type]
    assert written == [["a"], ["b", "c"]]
    assert socket.sent == []


async def test_texts_the_protocol_declines_go_the_asgi_way_in_order() -> None:
    socket = FakeSocket(lambda texts: False)  # closing, paused, a fragment in hand...
    await send_texts(socket, ["a"])  # type: ignore[arg-type]
    await send_texts(socket, ["b", "c"])  # type: ignore[arg-type]
    assert socket.sent == ["a", {"type": "websocket.send", "texts": ["b", "c"]}]


async def test_without_the_extension_each_text_is_its_own_message() -> None:
    socket = FakeSocket(None)
    socket.scope = {}  # another ASGI server, a test client
    await send_texts(socket, ["a", "b"])  # type: ignore[arg-type]
    assert socket.sent == ["a", "b"]
