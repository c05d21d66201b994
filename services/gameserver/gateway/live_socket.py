"""Live updates: follow a game's stream and push every new event to a viewer, as that viewer
may see it, over a WebSocket or Server-Sent Events (docs/http-api.md, "Live updates").

`follow` reads the game's stream with ``XREAD BLOCK`` from the last version it sent, so events
arrive in version order, none is skipped and none is sent twice; a client resumes with
``after=<last version seen>`` (or SSE's ``Last-Event-ID``), checked when it names the event's
mark too (``<version>.<mark>``, an event stream's message id: `event_mark`). Each live channel
reads on its own connection whose socket timeout is longer than the block (`LiveReader`), so a
game that stays quiet for minutes never cuts the read: an idle block just returns nothing and
the read starts again. WebSocket pings (uvicorn's, every 20 s) and SSE comment pings keep
proxies and the browser from dropping an idle channel.

Secrets are blanked with the game's ``visible_event`` (Renature's ``renature.view``) before
anything leaves the process.
A seat that asks for it (``include=view``) gets each event together with its view and legal
actions as of that event, so it needs no other request to draw the game and offer the moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import AsyncGenerator
from typing import cast

import msgspec
from fastapi import WebSocket
from fastapi.security import HTTPAuthorizationCredentials

from eventstore import MAX_VERSION
from gameplatform import get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState, JsonValue
from gameplatform.registry import DEFAULT_GAME
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.live_answers import Riding
from gameserver.gateway.live_budget import pace
from gameserver.gateway.live_commands import GRACE_S, serve_commands
from gameserver.gateway.live_frames import send_texts
from gameserver.gateway.live_hub import PAGE, HistoryRewound, entries_after
from gameserver.gateway.live_movers import Item
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

INCLUDES = frozenset({"view"})
REWOUND = "history_rewound"
"""The refusal of a channel whose viewer saw events the game's stream no longer holds."""


MARK = re.compile(r"^[0-9a-f]{12}$")


def event_mark(shown: bytes) -> str:
    """An event as a viewer was sent it (its JSON, secrets blanked), in 12 hex digits of its
    SHA-256: an event stream's message ids carry it after the version (``57.0f3a9c1d2e4b``), so
    that a client resuming with ``Last-Event-ID`` (which a browser's ``EventSource`` sends by
    itself) is resumed only where the stream still holds the event it saw last. It tells
    nothing the viewer was not sent."""
    return hashlib.sha256(shown).hexdigest()[:12]


def parse_after(text: str | None) -> tuple[int, str]:
    """``after`` of a live channel: a version from 0 to MAX_VERSION, with the mark of the
    event seen at that version or without (``57.0f3a9c1d2e4b`` or ``57``; 422 otherwise)."""
    if text is None or text == "":
        return 0, ""
    version, dot, mark = text.partition(".")
    if not version.isdigit() or int(version) > MAX_VERSION or (dot and not MARK.match(mark)):
        raise ApiError(
            422,
            "malformed_request",
            f"after: a version from 0 to {MAX_VERSION}, alone or with the mark of the event "
            f"seen there (57.0f3a9c1d2e4b), not {text!r}",
        )
    return int(version), mark


def parse_include(text: str | None) -> bool:
    """``include=view``: push the seat's view and legal actions with each event."""
    if text is None or text == "":
        return False
    if text not in INCLUDES:
        raise ApiError(422, "malformed_request", "include: 'view' or nothing")
    return True


class Channel(msgspec.Struct, frozen=True):
    """Who follows which game from where (checked before anything is sent)."""

    game_id: str
    viewer: int | None
    after: int
    with_view: bool
    ended: bool
    """The game is over and the viewer has every event already: nothing will come."""
    game: str = DEFAULT_GAME
    """The game's game (`gameplatform.get_game`): how its events read and show."""
    closed_at: int = 0
    """The game's last version when it is over (it never changes again), else 0."""
    closed_head: str = ""
    """The hash of that last event (a crash under ``everysec`` may take an end back, and the
    game end again at the same version with other events)."""
    passed: bytes = b""
    """The event at ``after`` as stored, when the viewer resumed with its mark: every read of
    the stream again must still find it (`live_hub.entries_after`)."""

    @property
    def finished_for_a_spectator(self) -> bool:
        """A spectator's plain channel on a finished game: served from the worker's frames
        of that game (`gateway.spectator_backlog`)."""
        return self.closed_at > 0 and self.viewer is None and not self.with_view


async def open_channel(
    gateway: Gateway, game_id: str, token: str | None, after: str | None, include: str | None
) -> Channel:
    """422 for a bad ``after`` or ``include``, 404 for an unknown game, 403 for a wrong
    token (browsers cannot set headers on a WebSocket or an EventSource: the token may come
    as a query parameter), 409 ``history_rewound`` for an ``after`` past the game's last
    version (the viewer saw events that a crash took back, `HistoryRewound`)."""
    version, mark = parse_after(after)
    with_view = parse_include(include)
    (game, state), head = await gateway.games.head(game_id)
    credentials = (
        None if token is None else HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
    )
    viewer = await gateway.viewer_of(game_id, credentials)
    if version > state.version:  # the viewer saw events the stream does not hold
        raise ApiError(
            409,
            REWOUND,
            f"after={version}, but the game's last version is {state.version}: the events you "
            "saw past it were taken back (the store came back without its last writes after a "
            f"crash), or never existed. Read the game again and follow it from {state.version}.",
        )
    passed = b""
    if mark and version:
        passed = await _still_held(gateway, game, game_id, version, mark, viewer, state.version)
    closed = game.is_closed(state)
    ended = closed and version >= state.version
    closed_at = state.version if closed else 0
    closed_head = head if closed else ""
    return Channel(
        game_id, viewer, version, with_view, ended, game.name, closed_at, closed_head, passed
    )


async def _still_held(
    gateway: Gateway,
    game: HostedGame,
    game_id: str,
    version: int,
    mark: str,
    viewer: int | None,
    last: int,
) -> bytes:
    """The event at ``version`` as stored, when it is still the one the viewer saw (its
    ``mark``); 409 ``history_rewound`` otherwise: a crash took that event back and the game
    went on, giving its version to another event."""
    stored = await gateway.games.stored_at(game_id, version)
    shown = None if stored is None else game.visible_event(game.decode_event(stored), viewer)
    if stored is None or event_mark(msgspec.json.encode(shown)) != mark:
        raise ApiError(
            409,
            REWOUND,
            f"The event you saw at version {version} is no longer the game's: it was taken "
            "back (the store came back without its last writes after a crash) and the game went "
            f"on without it. Read the game again and follow it from {last}.",
        )
    return stored


async def follow(
    gateway: Gateway,
    game_id: str,
    after: int,
    game: str,
    viewer: int | None = None,
    passed: bytes = b"",
) -> AsyncGenerator[list[Event], None]:
    """Every event after version ``after``, then each new one as it is appended; returns after
    the event that closes the game (its game's ``closes``: the end, or a cancellation). The
    worker's `LiveHub` reads the feeds for every channel at once; the backlog comes from the
    game's stream: nothing is skipped or repeated. A spectator's backlog waits for one of the
    worker's turns (`SpectatorBacklogs`), given back once it is sent.

    The events come in batches of those at hand: a batch grows only while the next event is
    handed over already (a move's events come in one feed read), never while it waits, so a
    channel sends a move's events at once (`pump`: one socket write, not one per event). The
    ``viewer``'s own moves' events come before the game's other channels get them
    (`live_movers`)."""
    rules = get_game(game)
    key = gateway.layout.game_key(game_id)

    async def backlog(last: int) -> list[Item]:
        entries = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            await gateway.redis.xrange(key, min=f"(0-{last}", max="+", count=PAGE),
        )
        return [(_version(entry_id), fields[b"event"]) for entry_id, fields in entries]

    give_back = await gateway.spectator_backlogs.take_turn(viewer is None)
    try:
        follower = await gateway.live.follow(game_id, viewer)
        try:
            entries = entries_after(follower, backlog, after, give_back, passed)
            batch: list[Event] = []
            async for version, data in entries:
                event = gateway.live.decoded(game_id, version, data, rules.decode_event)
                batch.append(event)
                if rules.closes(event):  # nothing follows: the channel closes (WS 1000, SSE end)
                    yield batch
                    return
                if not follower.next_is(version + 1):
                    yield batch
                    batch = []
        finally:
            gateway.live.leave(follower)
    finally:
        give_back()


async def finished_frames(gateway: Gateway, channel: Channel) -> AsyncGenerator[str, None]:
    """A spectator's frames of a finished game after ``channel.after``, from the worker's
    memory (worked out once per game), sent in one of the spectators' turns."""
    rules = get_game(channel.game)

    async def make() -> list[tuple[int, str]]:
        frames, made = Frames(channel, None), []
        for event in await gateway.games.events(channel.game_id, 0):
            if event.version > channel.closed_at:
                break
            made.append((event.version, frames.frame(event).decode()))
            if rules.closes(event):
                break
        return made

    backlogs = gateway.spectator_backlogs
    async with backlogs.turn(spectator=True):
        ending = (channel.closed_at, channel.closed_head)
        made = await backlogs.finished_frames(channel.game_id, ending, make)
        for version, frame in made:
            if version > channel.after:
                yield frame


class Frames:
    """Turns raw events into what the viewer receives: the redacted event, or (with
    ``include=view``) ``{"event", "view", "legal_actions"}`` as of that event."""

    def __init__(self, channel: Channel, state: HostedState | None) -> None:
        self.channel = channel
        self.state = state
        self.game = get_game(channel.game)

    def frame(self, event: Event) -> bytes:
        return self._framed(event)[0]

    def marked(self, event: Event) -> tuple[bytes, str]:
        """The frame and the event's `event_mark` (an event stream's message id carries it;
        the WebSocket's frames need none, and skip the hash)."""
        frame, shown = self._framed(event)
        return frame, event_mark(shown)

    def _framed(self, event: Event) -> tuple[bytes, bytes]:
        """The frame and the event as shown in it (the whole frame without ``include=view``)."""
        viewer, game = self.channel.viewer, self.game
        shown = msgspec.json.encode(game.visible_event(event, viewer))
        if not self.channel.with_view:
            return shown, shown
        state = self.state = game.evolve(self.state, event)
        body: dict[str, JsonValue] = {
            "event": msgspec.Raw(shown),  # JSON already
            "view": game.view(state, viewer),
        }
        body["legal_actions"] = [] if viewer is None else game.legal_actions(state, viewer)
        return msgspec.json.encode(body), shown


async def frames_state(gateway: Gateway, channel: Channel) -> HostedState | None:
    """The state as of ``channel.after`` (only needed to push views)."""
    if not channel.with_view:
        return None
    events = await gateway.games.events(channel.game_id, 0)
    return get_game(channel.game).replay([ev for ev in events if ev.version <= channel.after])


async def pump(
    websocket: WebSocket,
    gateway: Gateway,
    channel: Channel,
    frames: Frames,
    riding: Riding,
) -> None:
    """Send the channel's frames until the game's last: a spectator's of a finished game from
    the worker's memory, anyone else's as `follow` reads them; a move's frames in one write,
    with the answer to the seat's command that caused them (``riding``: `live_answers`)."""
    if channel.finished_for_a_spectator:  # the same frames, from memory
        async with contextlib.aclosing(finished_frames(gateway, channel)) as kept:
            async for frame in kept:
                await pace(gateway.spectator_frames, None)  # gateway.live_budget
                await websocket.send_text(frame)
        return
    events = follow(
        gateway, channel.game_id, channel.after, channel.game, channel.viewer, channel.passed
    )
    async with contextlib.aclosing(events):
        async for batch in events:  # a move's events: one write (gateway.live_frames)
            texts = []
            for event in batch:
                await pace(gateway.spectator_frames, channel.viewer)  # gateway.live_budget
                texts.append(frames.frame(event).decode())
            if not await riding.along(batch, texts):  # else sent with the move's answer
                await send_texts(websocket, texts)


async def serve_websocket(
    websocket: WebSocket,
    gateway: Gateway,
    game_id: str,
    token: str | None,
    after: str | None,
    include: str | None,
) -> None:
    """The WebSocket channel: one text frame per event; a refusal is one ``{"error"}`` frame
    and close code 4000 + its HTTP status; close 1000 once the game's last event is sent (at
    once when the viewer has it already), 1011 when reading the stream fails."""
    await websocket.accept()
    try:
        channel = await open_channel(gateway, game_id, token, after, include)
    except ApiError as error:
        await refuse(websocket, error)
        return
    if channel.ended:
        await websocket.close(code=1000)
        return
    frames = Frames(channel, await frames_state(gateway, channel))

    riding = Riding(channel.after)  # a move's answer in its pushes' write (live_answers.py)
    sending = asyncio.create_task(pump(websocket, gateway, channel, frames, riding))
    # Commands and their answers ride the same socket (gateway/live_commands.py).
    listening = asyncio.create_task(
        serve_commands(websocket, gateway, game_id, channel.viewer, token, riding)
    )
    try:
        done, _ = await asyncio.wait({sending, listening}, return_when=asyncio.FIRST_COMPLETED)
        if sending in done:  # the channel closes: the message in hand is answered first
            await riding.settled(GRACE_S)
    finally:
        for task in (sending, listening):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if sending in done:  # the game ended (1000) or reading the stream failed (1011)
        failure = sending.exception()
        if isinstance(failure, HistoryRewound):  # what it sent was taken back: 4409
            with contextlib.suppress(Exception):
                await refuse(websocket, ApiError(409, REWOUND, str(failure)))
            return
        if failure is not None:
            log.error("live updates failed", game_id=game_id, error=str(failure))
        with contextlib.suppress(Exception):
            await websocket.close(code=1000 if failure is None else 1011)


async def refuse(websocket: WebSocket, error: ApiError) -> None:
    """A refusal on the WebSocket: one ``{"error"}`` frame, then close code 4000 + status."""
    await websocket.send_json({"error": {"code": error.code, "message": error.message}})
    await websocket.close(code=4000 + error.status)


def _version(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.partition("-")[2])
