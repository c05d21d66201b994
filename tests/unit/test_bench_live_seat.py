"""The bench's live players (`bench.loadgen.LiveSeat`, `play_live`): a seat moves once its
socket has been pushed the events before its move, as a frontend learns that its turn has
come, and each answer reaches the move that waits for it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bench import loadgen
from bench.live_players import LiveSeat
from bench.loadgen import Game, Step, play_live

SOON = 0.02  # s: long enough for anything ready to have run


class Socket:
    """A live socket's stand-in: the frames put in arrive in order; what is sent is kept."""

    def __init__(self) -> None:
        self.frames: asyncio.Queue[str] = asyncio.Queue()
        self.sent: list[bytes] = []

    def __aiter__(self) -> Socket:
        return self

    async def __anext__(self) -> str:
        return await self.frames.get()

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def close(self) -> None:
        pass

    def push(self, *versions: int) -> None:
        for version in versions:
            self.frames.put_nowait(f'{{"type":"Something","version":{version},"seat":0}}')

    def answer(self, command_id: str, last_version: int) -> None:
        answer = {"command_id": command_id, "status": "accepted", "last_version": last_version}
        self.frames.put_nowait(json.dumps({"answer": answer}))


def load() -> Any:
    return loadgen.Load(config={}, pool=[], redis=None, layout=None)


async def test_a_seat_waits_until_it_has_been_pushed_a_version() -> None:
    socket = Socket()
    seat = LiveSeat(socket)
    waiting = asyncio.create_task(seat.reached(7))
    socket.push(5, 6)
    await asyncio.sleep(SOON)
    assert not waiting.done()
    socket.push(7)
    await asyncio.wait_for(waiting, 1.0)
    await asyncio.wait_for(seat.reached(7), SOON)  # had already: at once
    assert seat.pushed == 3
    await seat.close()


async def test_the_next_mover_moves_once_its_socket_has_the_previous_moves_events() -> None:
    sockets = [Socket(), Socket()]
    seats = [LiveSeat(socket) for socket in sockets]
    move: Any = None  # the script's command; the players send only its body
    steps = [Step("move", 0, move, b'{"type":"A"}'), Step("move", 1, move, b'{"type":"B"}')]
    for socket in sockets:
        socket.push(1, 2, 3)  # the game's events up to its start, pushed at the socket's open
    playing = asyncio.create_task(play_live(load(), Game("seed", 2, steps), "g", seats, 3))
    await asyncio.sleep(SOON)
    assert sockets[0].sent == [b'{"command_id":"m0","command":{"type":"A"}}']
    sockets[0].push(4, 5)
    sockets[0].answer("m0", 5)
    await asyncio.sleep(SOON)
    assert sockets[1].sent == []  # its socket has not been pushed the move's events yet
    sockets[1].push(4, 5)
    await asyncio.sleep(SOON)
    assert sockets[1].sent == [b'{"command_id":"m1","command":{"type":"B"}}']
    sockets[1].push(6)
    sockets[1].answer("m1", 6)
    await asyncio.wait_for(playing, 1.0)
    for seat in seats:
        await seat.close()
