"""The reference web client and the dispute viewer: static pages over the public API, and the
board picture they draw (the very SVG that ``renature replay --svg`` writes).

The pages use nothing but the public HTTP API and the live channel, as an external frontend
would; the only endpoints added for them are the picture of a game after any event and a
stateless inspection of an exported events file (nothing of it is stored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, Response

from eventstore import MAX_VERSION
from gameserver.gateway.dependencies import GameId, GatewayDep
from gameserver.gateway.disputes import Inspection, plugin_of, replayed, title

__all__ = ["At", "plugin_of", "replayed", "router"]
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, errors

STATIC = Path(__file__).resolve().parent.parent / "static"

router = APIRouter()
SVG = "image/svg+xml"
At = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_VERSION,
        description="The picture after this event (default, or past the last: the last)",
    ),
]


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html")


@router.get("/", include_in_schema=False)
async def lobby_page() -> FileResponse:
    return _page("index.html")


@router.get("/play/{game_id}", include_in_schema=False)
async def table_page(game_id: str) -> FileResponse:
    return _page("play.html")


@router.get("/viewer", include_in_schema=False)
async def upload_viewer_page() -> FileResponse:
    return _page("viewer.html")


@router.get("/viewer/{game_id}", include_in_schema=False)
async def viewer_page(game_id: str) -> FileResponse:
    return _page("viewer.html")


@router.get(
    "/games/{game_id}/picture.svg",
    tags=["read"],
    response_class=Response,
    responses={200: {"content": {SVG: {}}, "description": "The board"}, **errors(404, 422, 503)},
)
async def game_picture(game_id: GameId, gateway: GatewayDep, at: At = None) -> Response:
    """The board as an SVG picture (what ``renature replay --svg`` draws) after event ``at``:
    public facts only, so anyone may fetch it at any version up to the game's current one."""
    game, state = await gateway.games.played(game_id)
    if at is not None and at < state.version:
        past = replayed(game, (await gateway.games.events(game_id, 0))[:at])
        state = past if past is not None else state
    return Response(game.picture_svg(state, title(game, state)), media_type=SVG)


@router.post(
    "/disputes",
    tags=["audit"],
    response_class=Response,
    responses={
        **body(Inspection, "The audit, the explanation and the picture of the file"),
        **errors(413, 422, 503),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "An exported events file (JSON lines, as `renature export` writes); "
            "sent as text/plain or application/x-ndjson, at most 4 MiB",
            "content": {"text/plain": {"schema": {"type": "string", "minLength": 1}}},
        }
    },
)
async def inspect_dispute(request: Request, gateway: GatewayDep, at: At = None) -> Response:
    """Audit an exported events file without storing anything: the verdict, the explanation
    (when the game is finished and holds) and whether this server signed it (`seal`: signed,
    with the key and up to which event; not signed; or differs from what it signed at event
    N), or with ``at`` only the board after event ``at``. A file that is not a game answers
    200 too, with a failed audit that says why. Worked out in a process of its own
    (`gateway.disputes`); 503 when too many wait."""
    raw = await request.body()  # at most LARGER_BODIES['/disputes']: the limits middleware
    if not raw:
        raise ApiError(422, "malformed_request", "Send the events file as the request body.")
    keys = b'{"keys": []}'
    if at is None:  # the seal is checked against the keys this server publishes
        keys = msgspec.json.encode(await gateway.signing_keys())
    return Response(await gateway.disputes.inspect(raw, at, keys), media_type="application/json")
