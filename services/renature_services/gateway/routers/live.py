"""Live updates over a WebSocket: each new event as this viewer may see it."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.security import HTTPAuthorizationCredentials

from renature_services.gateway.dependencies import Gateway, GatewayDep
from renature_services.gateway.errors import ApiError
from renature_services.gateway.live import pump_events
from renature_services.logging import get_logger
from renature_store import MAX_VERSION

log = get_logger("renature.gateway")

router = APIRouter()


@router.websocket("/games/{game_id}/live")
async def live(
    websocket: WebSocket,
    game_id: str,
    gateway: GatewayDep,
    token: str | None = None,
    after: int = 0,
) -> None:
    """Each new event as this viewer may see it, in version order (see docs/http-api.md)."""
    await websocket.accept()
    try:
        viewer = await _viewer(gateway, game_id, token, after)
    except ApiError as error:
        await websocket.send_json({"error": {"code": error.code, "message": error.message}})
        await websocket.close(code=4000 + error.status)
        return
    stream_key = gateway.layout.game_key(game_id)
    pump = asyncio.create_task(
        pump_events(gateway.redis, stream_key, viewer, after, websocket.send_text)
    )
    listen = asyncio.create_task(_until_disconnect(websocket))
    done, _ = await asyncio.wait({pump, listen}, return_when=asyncio.FIRST_COMPLETED)
    for task in (pump, listen):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    if pump in done:  # the game ended (1000) or reading the stream failed (1011)
        failed = pump.exception() is not None
        if failed:
            log.error("live updates failed", game_id=game_id, error=str(pump.exception()))
        with contextlib.suppress(Exception):
            await websocket.close(code=1011 if failed else 1000)


async def _viewer(gateway: Gateway, game_id: str, token: str | None, after: int) -> int | None:
    """Who is watching: 422 for an ``after`` beyond any version, 404 for an unknown game, 403
    for a wrong token. Browsers cannot set headers on a WebSocket: the token is a query
    parameter."""
    if not 0 <= after <= MAX_VERSION:
        raise ApiError(422, "malformed_request", f"after: a version from 0 to {MAX_VERSION}")
    await gateway.games.require(game_id)
    credentials = (
        None if token is None else HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
    )
    return await gateway.viewer_of(game_id, credentials)


async def _until_disconnect(websocket: WebSocket) -> None:
    """Return when the client goes away (incoming messages are ignored)."""
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
