"""Live updates as Server-Sent Events: the same channel as the WebSocket, for clients that
prefer plain HTTP (``EventSource`` in a browser reconnects by itself with ``Last-Event-ID``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

import msgspec
from fastapi import APIRouter, Header, Query, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from gameserver.gateway.dependencies import Credentials, GameId, GatewayDep
from gameserver.gateway.http_errors import error_body
from gameserver.gateway.live_budget import pace
from gameserver.gateway.live_hub import HistoryRewound
from gameserver.gateway.live_socket import (
    REWOUND,
    Frames,
    follow,
    frames_state,
    open_channel,
)
from gameserver.gateway.openapi import errors

router = APIRouter(tags=["live"])

PING_S = 15
"""A comment line this often keeps an idle stream open through proxies."""


@router.get(
    "/games/{game_id}/events/stream",
    response_class=EventSourceResponse,
    # An endless stream, like the WebSocket: described in docs/http-api.md, not in the
    # OpenAPI document (whose clients, Schemathesis included, expect an answer that ends).
    include_in_schema=False,
    responses={
        200: {
            "description": "An event stream: one `event: <type>`, `id: <version>.<mark>`, "
            "`data: <JSON>` message per event, then `event: end` once the game is over",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        204: {"description": "The game is over and every event was sent already"},
        **errors(403, 404, 409, 422, 503),
    },
    openapi_extra={"security": [{}]},
)
async def event_stream(
    game_id: GameId,
    gateway: GatewayDep,
    credentials: Credentials,
    token: Annotated[
        str | None, Query(description="Seat token (EventSource cannot send headers)")
    ] = None,
    after: Annotated[str | None, Query(description="After this version (or id)")] = None,
    include: Annotated[
        str | None, Query(description="`view`: each event with the seat's view")
    ] = None,
    last_event_id: Annotated[
        str | None,
        Header(alias="Last-Event-ID", description="Resume after this id (wins over after)"),
    ] = None,
) -> Response:
    """The game's events after ``after`` (or ``Last-Event-ID``), then each new one, as the
    caller may see them; the same frames as the WebSocket channel (see docs/http-api.md)."""
    if token is None and credentials is not None:
        token = credentials.credentials
    resume = last_event_id if last_event_id not in (None, "") else after
    channel = await open_channel(gateway, game_id, token, resume, include)
    if channel.ended:  # 204 tells an EventSource not to reconnect
        return Response(status_code=204)
    frames = Frames(channel, await frames_state(gateway, channel))

    async def messages() -> AsyncIterator[ServerSentEvent | bytes]:
        viewer = channel.viewer  # a spectator's backlog takes a turn (live_socket.follow)
        events = follow(gateway, game_id, channel.after, channel.game, viewer, channel.passed)
        async with contextlib.aclosing(events):
            try:
                async for batch in events:  # a move's events: one chunk, one write
                    chunk = []
                    for event in batch:
                        await pace(gateway.spectator_frames, channel.viewer)  # live_budget
                        frame, mark = frames.marked(event)
                        message = ServerSentEvent(
                            data=frame.decode(),
                            event=type(event).__name__,
                            id=f"{event.version}.{mark}",  # a resume checks it (live_socket)
                        )
                        chunk.append(message.encode())
                    yield b"".join(chunk)
            except HistoryRewound as rewound:  # what it sent was taken back: read it again
                error = msgspec.json.encode(error_body(REWOUND, str(rewound))).decode()
                yield ServerSentEvent(data=error, event=REWOUND)
                return
        yield ServerSentEvent(data="{}", event="end")

    return EventSourceResponse(messages(), ping=PING_S)
