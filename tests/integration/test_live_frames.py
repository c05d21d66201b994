"""A move's events reach a live channel in one write: a WebSocket's frames
(`gateway.live_frames`), an event stream's messages (one chunk), each as before; on the mover's
socket the move's answer comes in that write too, after them (`gateway.live_answers`). Real
Redis, the real rules service, uvicorn with the gateway's WebSocket protocol on a free port; the
tests record what uvicorn writes to each connection."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

from devkit.redis_server import free_port
from devkit.waiting import eventually
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway import live_answers
from gameserver.gateway.app import create_app
from gameserver.gateway.front_door import uvicorn_options
from gameserver.gateway.live_frames import FramesAtOnce
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature.state import GameState
from support.gateway import gateway_settings
from support.hosting import state_as

pytestmark = pytest.mark.redis


class Recording:
    """A transport that keeps what is written to it (and passes everything on), and the
    writes of every recorded connection in order (``order``: each write's connection's
    ``writes``, and the write)."""

    order: ClassVar[list[tuple[list[bytes], bytes]]] = []

    def __init__(self, transport: Any, writes: list[bytes]) -> None:
        self._transport = transport
        self._writes = writes

    def write(self, data: bytes) -> None:
        self._writes.append(bytes(data))
        Recording.order.append((self._writes, self._writes[-1]))
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class RecordedFrames(FramesAtOnce):
    """The gateway's WebSocket protocol, each connection's writes recorded apart."""

    recorded: ClassVar[list[list[bytes]]] = []

    def connection_made(self, transport: Any) -> None:
        RecordedFrames.recorded.append([])
        super().connection_made(Recording(transport, self.recorded[-1]))  # type: ignore[arg-type]


class RecordedHttp(HttpToolsProtocol):
    """uvicorn's HTTP protocol, each connection's writes recorded apart."""

    recorded: ClassVar[list[list[bytes]]] = []

    def connection_made(self, transport: Any) -> None:
        RecordedHttp.recorded.append([])
        super().connection_made(Recording(transport, self.recorded[-1]))  # type: ignore[arg-type]


def frames_in(write: bytes) -> list[dict[str, Any]]:
    """The server's text frames in one write (unmasked, as a server sends them)."""
    frames, at = [], 0
    while at < len(write):
        assert write[at] == 0x81, write[at : at + 8]  # FIN and a text frame
        length, at = write[at + 1] & 0x7F, at + 2
        if length == 126:
            length, at = int.from_bytes(write[at : at + 2], "big"), at + 2
        elif length == 127:
            length, at = int.from_bytes(write[at : at + 8], "big"), at + 8
        frames.append(json.loads(write[at : at + length]))
        at += length
    return frames


@pytest.fixture
async def served(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[str]:
    settings = gateway_settings(redis_url, allow_chosen_seeds=True)
    app = create_app(settings, command_timeout=5.0)
    port = free_port()
    assert uvicorn_options(settings.front_door)["ws"] is FramesAtOnce  # what the gateway serves
    options = {**uvicorn_options(settings.front_door), "ws": RecordedFrames, "http": RecordedHttp}
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **options
    )
    server = uvicorn.Server(config)
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-frames")):
        task = asyncio.create_task(server.serve())
        await eventually(lambda: server.started or task.done(), "uvicorn serving", timeout=10)
        assert server.started
        try:
            yield f"127.0.0.1:{port}"
        finally:
            server.should_exit = True
            await task


async def new_game(client: GatewayClient, seed: str) -> tuple[str, list[str], int]:
    """A started two-seat game: its id, its seats' tokens and its version."""
    game_id = await client.create_game(2, seed=seed)
    tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    start = await client.start(game_id, tokens[0])
    return game_id, tokens, start.last_version


async def one_move(client: GatewayClient, game_id: str, tokens: list[str]) -> tuple[int, int]:
    """The current seat's first legal move, over HTTP: its first and last version."""
    state = await state_as(client, game_id, tokens[0], GameState)
    token = tokens[state.current]
    result = await client.send(game_id, token, (await client.legal_actions(game_id, token))[0])
    return result.first_version, result.last_version


MOVES = 60
"""Moves played at most until one appends several events (one in four does, in practice)."""


async def received_until(ws: Any, version: int) -> list[int]:
    """The versions of the frames received until ``version`` (5 s at most)."""
    versions: list[int] = []
    while not versions or versions[-1] < version:
        versions.append(json.loads(await asyncio.wait_for(ws.recv(), 5))["version"])
    return versions


async def test_each_move_reaches_a_live_socket_in_one_write_frame_by_frame(served: str) -> None:
    RecordedFrames.recorded.clear()
    async with GatewayClient(f"http://{served}") as client:
        game_id, tokens, started = await new_game(client, "frames")
        live = f"ws://{served}/games/{game_id}/live"
        async with connect(live) as spectator:  # it offers compression, as browsers do
            (writes,) = RecordedFrames.recorded
            backlog = await received_until(spectator, started)
            assert backlog == list(range(1, started + 1))
            await eventually(lambda: len(writes) >= 2, "the backlog written")
            moves: list[tuple[int, int]] = []  # each move's first and last version
            while len(moves) < MOVES and not any(last > first for first, last in moves):
                before = len(writes)
                first, last = await one_move(client, game_id, tokens)
                moves.append((first, last))
                versions = await received_until(spectator, last)
                assert versions == list(range(first, last + 1))
                written = [frames_in(write) for write in writes[before:]]
                assert [[frame["version"] for frame in w] for w in written] == [versions]
            sent = writes[1:]  # after the handshake's answer, before the close
        shown = await client.events(game_id)  # what a spectator reads over HTTP
    assert any(last > first for first, last in moves), moves  # several events, one write
    pushed = [frame for write in sent for frame in frames_in(write)]
    assert [frame["version"] for frame in pushed] == list(range(1, moves[-1][1] + 1))
    assert [frame["type"] for frame in pushed] == [type(event).__name__ for event in shown]


async def test_a_browsers_offer_of_compression_is_declined_and_the_frames_go_plain(
    served: str,
) -> None:
    """Every browser offers permessage-deflate: the gateway declines it (gateway.live_frames),
    and the frames it writes are plain text frames (no RSV1 bit), readable as sent."""
    RecordedFrames.recorded.clear()
    async with GatewayClient(f"http://{served}") as client:
        game_id, _, started = await new_game(client, "plain")
        async with connect(f"ws://{served}/games/{game_id}/live") as spectator:
            request, response = spectator.request, spectator.response
            assert request is not None  # the handshake is done
            assert response is not None
            offered = request.headers["Sec-WebSocket-Extensions"]
            assert offered.startswith("permessage-deflate")  # the client's default offer
            assert "Sec-WebSocket-Extensions" not in response.headers
            assert spectator.protocol.extensions == []
            assert await received_until(spectator, started) == list(range(1, started + 1))
            (writes,) = RecordedFrames.recorded
            await eventually(lambda: len(writes) >= 2, "the backlog written")
            frames = [frame for write in writes[1:] for frame in frames_in(write)]
    assert [frame["version"] for frame in frames] == list(range(1, started + 1))


async def answered(ws: Any) -> list[dict[str, Any]]:
    """The frames received until an answer, that one last (5 s at most)."""
    frames: list[dict[str, Any]] = []
    while not frames or "answer" not in frames[-1]:
        frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
    return frames


async def test_a_moves_answer_comes_in_the_write_of_its_events_after_them(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_answers, "HOLD_S", 5.0)  # the order is tested, not the time
    RecordedFrames.recorded.clear()
    async with GatewayClient(f"http://{served}") as client:
        game_id, tokens, started = await new_game(client, "riding")
        live = f"ws://{served}/games/{game_id}/live?token="
        async with (
            connect(live + tokens[0]) as first,
            connect(live + tokens[1]) as second,
        ):
            sockets, writes = (first, second), RecordedFrames.recorded  # seat 0's, seat 1's
            for ws in sockets:
                assert await received_until(ws, started) == list(range(1, started + 1))
            for number in range(MOVES // 4):
                mover = (await state_as(client, game_id, tokens[0], GameState)).current
                action = (await client.legal_actions(game_id, tokens[mover]))[0]
                before = [len(w) for w in writes]
                command = {"command_id": f"m{number}", "command": msgspec.to_builtins(action)}
                await sockets[mover].send(json.dumps(command))
                frames = await answered(sockets[mover])
                answer = frames[-1]["answer"]
                assert answer["status"] == "accepted", answer
                events = list(range(answer["first_version"], answer["last_version"] + 1))
                assert [frame["version"] for frame in frames[:-1]] == events  # events first
                assert [frames_in(w) for w in writes[mover][before[mover] :]] == [frames]
                other = 1 - mover  # the other seat: the events alone, in one write
                assert await received_until(sockets[other], events[-1]) == events
                pushed = [frames_in(w) for w in writes[other][before[other] :]]
                assert [[frame["version"] for frame in w] for w in pushed] == [events]


@contextlib.asynccontextmanager
async def watched_game(
    served: str, client: GatewayClient, seed: str
) -> AsyncIterator[tuple[str, list[str], tuple[Any, Any, Any]]]:
    """A started two-seat game with both seats' sockets and a spectator's open and caught up:
    its id, its seats' tokens and the sockets (recorded in that order, writes cleared)."""
    RecordedFrames.recorded.clear()
    game_id, tokens, started = await new_game(client, seed)
    live = f"ws://{served}/games/{game_id}/live"
    async with (
        connect(f"{live}?token={tokens[0]}") as first,
        connect(f"{live}?token={tokens[1]}") as second,
        connect(live) as watcher,
    ):
        for ws in (first, second, watcher):
            assert await received_until(ws, started) == list(range(1, started + 1))
        yield game_id, tokens, (first, second, watcher)


async def next_move(client: GatewayClient, game_id: str, tokens: list[str]) -> tuple[int, Any]:
    """The seat to move and its first legal action; the writes recorded from now on."""
    mover = (await state_as(client, game_id, tokens[0], GameState)).current
    action = (await client.legal_actions(game_id, tokens[mover]))[0]
    Recording.order.clear()
    return mover, action


@pytest.fixture
def holds_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """A move's pushes and answer wait for each other 5 s: the order is tested, not the time."""
    monkeypatch.setattr(live_answers, "HOLD_S", 5.0)


@pytest.mark.usefixtures("holds_long")
async def test_a_moves_mover_is_written_to_before_the_games_other_sockets(served: str) -> None:
    """The events of a move and its answer go to the mover's socket in the worker's first
    write after the move; the other seat's socket and a spectator's get the same events after
    it, each in one write (`gateway.live_movers`)."""
    async with (
        GatewayClient(f"http://{served}") as client,
        watched_game(served, client, "movers-first") as (game_id, tokens, sockets),
    ):
        writes = RecordedFrames.recorded
        for number in range(MOVES // 4):
            mover, action = await next_move(client, game_id, tokens)
            command = {"command_id": f"m{number}", "command": msgspec.to_builtins(action)}
            await sockets[mover].send(json.dumps(command))
            frames = await answered(sockets[mover])
            events = [frame["version"] for frame in frames[:-1]]
            for other in (1 - mover, 2):
                assert await received_until(sockets[other], events[-1]) == events
            # (a socket's writes are recorded on its HTTP connection too: left out)
            written = [
                (n, frames_in(write))
                for to, write in Recording.order
                for n, kept in enumerate(writes)
                if kept is to
            ]
            assert written[0] == (mover, frames), number  # the mover's write first
            assert sorted(n for n, _ in written[1:]) == [n for n in range(3) if n != mover]


@pytest.mark.usefixtures("holds_long")
async def test_a_move_sent_over_http_is_answered_before_the_games_other_sockets_get_it(
    served: str,
) -> None:
    """A seat that moves over HTTP with its live socket open (as the web client does): the
    move's answer is written before the other seat's socket and a spectator's get its events
    (`gateway.live_movers`), and every socket gets them, in one write each."""
    async with (
        GatewayClient(f"http://{served}") as client,
        watched_game(served, client, "http-mover-first") as (game_id, tokens, sockets),
    ):
        for _ in range(MOVES // 4):
            mover, action = await next_move(client, game_id, tokens)
            writes = RecordedFrames.recorded
            result = await client.send(game_id, tokens[mover], action)
            events = list(range(result.first_version, result.last_version + 1))
            for ws in sockets:
                assert await received_until(ws, events[-1]) == events
            order = [write for _, write in Recording.order]
            answered_at = next(
                n for n, write in enumerate(order) if write.startswith(b"HTTP/1.1 200")
            )
            others = [
                n
                for n, (to, _) in enumerate(Recording.order)
                if to is writes[1 - mover] or to is writes[2]
            ]
            assert len(others) == 2  # one write each
            assert answered_at < min(others)


def sse_messages(write: bytes) -> list[dict[str, str]]:
    """The event-stream messages in one write of a chunked body (size, CRLF, chunk, CRLF)."""
    size, _, rest = write.partition(b"\r\n")
    chunk = rest[: int(size, 16)].decode()
    messages = []
    for block in chunk.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            messages.append(fields)
    return messages


async def events_until(lines: AsyncIterator[str], seen: int, version: int) -> int:
    """Read the stream's lines until its ``version``-th event (``seen`` read so far)."""
    while seen < version:
        seen += (await asyncio.wait_for(anext(lines), 5)).startswith("event: ")
    return seen


async def test_each_move_reaches_an_event_stream_in_one_write(served: str) -> None:
    async with GatewayClient(f"http://{served}") as client:
        game_id, tokens, started = await new_game(client, "frames-sse")
        RecordedHttp.recorded.clear()
        async with (
            httpx.AsyncClient(base_url=f"http://{served}", timeout=10) as reader,
            reader.stream("GET", f"/games/{game_id}/events/stream") as stream,
        ):
            lines = stream.aiter_lines()
            await events_until(lines, 0, started)  # the backlog
            (sse,) = [w for w in RecordedHttp.recorded if w and b"event-stream" in w[0]]
            several = False
            for _ in range(MOVES):
                before = len(sse)
                first, last = await one_move(client, game_id, tokens)
                await events_until(lines, first - 1, last)
                assert len(sse[before:]) == 1, sse[before:]  # one write for the move's events
                versions = [m["id"].split(".")[0] for m in sse_messages(sse[before])]
                assert versions == [str(v) for v in range(first, last + 1)]
                several = last > first
                if several:
                    break
    assert several  # a move with several events came in one write


def client_frame(text: str | bytes, *, opcode: Opcode = Opcode.TEXT, fin: bool = True) -> bytes:
    """A client's frame (masked, as every client's is) of ``text``."""
    data = text.encode() if isinstance(text, str) else text
    return Frame(opcode, data, fin).serialize(mask=True)


def message(command_id: str, pad: int = 0) -> str:
    """A message the gateway answers ``not_seated`` on a spectator's socket, naming its id."""
    return json.dumps({"command_id": command_id, "command": {"type": "Nope", "pad": "x" * pad}})


async def answer_ids(ws: Any, count: int) -> list[str]:
    """The command ids of the next ``count`` answers (each ``not_seated``)."""
    ids = []
    for _ in range(count):
        answer = json.loads(await asyncio.wait_for(ws.recv(), 5))["answer"]
        assert answer["error"]["code"] == "not_seated", answer
        ids.append(answer["command_id"])
    return ids


async def test_a_clients_frames_reach_the_app_whole_however_the_bytes_come(served: str) -> None:
    """What a client writes reaches the app message by message, in order, whether several
    frames come in one piece, a frame comes in pieces, a ping or a fragmented message comes
    between them, or a frame needs a 16-bit length (`FramesAtOnce.data_received`)."""
    async with GatewayClient(f"http://{served}") as client:
        game_id, _, started = await new_game(client, "frames-in")
        async with connect(f"ws://{served}/games/{game_id}/live") as spectator:
            assert await received_until(spectator, started) == list(range(1, started + 1))
            write = spectator.transport.write  # raw bytes, frames made here
            write(b"".join(client_frame(message(f"c{n}")) for n in (1, 2, 3)))
            assert await answer_ids(spectator, 3) == ["c1", "c2", "c3"]
            long = client_frame(message("c4", pad=300))  # a 16-bit length
            write(long)
            assert await answer_ids(spectator, 1) == ["c4"]
            split = client_frame(message("c5"))
            write(split[:3])  # a frame in pieces: the header's first bytes only
            await asyncio.sleep(0.05)
            write(split[3:11])
            await asyncio.sleep(0.05)
            write(split[11:] + client_frame(message("c6")))
            assert await answer_ids(spectator, 2) == ["c5", "c6"]
            ping = client_frame(b"are you there", opcode=Opcode.PING)
            pong = await spectator.ping(b"ours")  # the client's own, answered
            write(client_frame(message("c7")) + ping + client_frame(message("c8")))
            assert await answer_ids(spectator, 2) == ["c7", "c8"]
            await asyncio.wait_for(pong, 5)
            text = message("c9")
            first = client_frame(text[:10], fin=False)
            rest = client_frame(text[10:], opcode=Opcode.CONT)
            write(first + rest + client_frame(message("c10")))
            assert await answer_ids(spectator, 2) == ["c9", "c10"]
            write(client_frame(b"\xff\xfe not UTF-8"))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(spectator.recv(), 5)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1007  # invalid data, as websockets answers it
