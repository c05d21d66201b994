"""Live updates over a WebSocket: each new event as this viewer may see it (the channel itself
is ``gameserver.gateway.live_socket``)."""

from __future__ import annotations

from fastapi import APIRouter, WebSocket

from gameserver.gateway.dependencies import GatewayDep
from gameserver.gateway.live_socket import serve_websocket

router = APIRouter()


@router.websocket("/games/{game_id}/live")
async def live(
    websocket: WebSocket,
    game_id: str,
    gateway: GatewayDep,
    token: str | None = None,
    after: str | None = None,
    include: str | None = None,
) -> None:
    """Each new event as this viewer may see it, in version order (see docs/http-api.md).
    ``after`` and ``include`` are checked by the channel, so a bad one is answered with close
    code 4422 rather than refused at the handshake."""
    await serve_websocket(websocket, gateway, game_id, token, after, include)
