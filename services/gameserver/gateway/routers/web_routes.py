"""The reference web client and the dispute viewer: static pages over the public API, and the
board picture they draw (the very SVG that ``renature replay --svg`` writes).

The pages use nothing but the public HTTP API and the live channel, as an external frontend
would; the only endpoints added for them are the picture of a game after any event and a
stateless inspection of an exported events file (nothing of it is stored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import msgspec
from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from eventstore import MAX_VERSION
from gameplatform import game_names, get_game
from gameplatform.audit import AuditReport, Finding, failed
from gameplatform.explanation import Explanation
from gameplatform.interface import Table
from gameplatform.registry import DEFAULT_GAME
from gameplatform.words import words
from gameserver.gateway.dependencies import GameId, GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, errors
from gameserver.gateway.schemas import MsgspecResponse
from gameserver.runtime.signing import SEAL_LINE
from gameserver.runtime.state_cache import AnyGame, game_reading
from renature import events as e

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


class Inspection(msgspec.Struct, frozen=True):
    """What the dispute viewer shows of an uploaded events file. A file that cannot be read
    (a line that is no event) or replayed is no error of the request: its audit fails and says
    where, and there is no picture."""

    game_id: str
    events: list[e.AnyEvent]
    version: int
    picture: str | None
    audit: AuditReport
    explanation: Explanation | None
    game: str = DEFAULT_GAME
    """The game whose events the file holds (the first game whose events its first line is)."""
    log: list[str] = []
    """Each event in words (``gameplatform.words``), in the file's order."""
    table: Table | None = None
    """The table after event ``at`` (seats, scores), None where the file cannot be folded."""
    client: str | None = None
    """The web client's own module for the game, as the catalog says."""


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
    return Response(game.picture_svg(state, _title(game, state)), media_type=SVG)


@router.post(
    "/disputes",
    tags=["audit"],
    response_class=MsgspecResponse,
    responses={
        **body(Inspection, "The audit, the explanation and the picture of the file"),
        **errors(413, 422),
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
async def inspect_dispute(request: Request, at: At = None) -> MsgspecResponse:
    """Audit an exported events file without storing anything: the verdict, the explanation
    (when the game is finished and holds), the events and the board after event ``at``. A
    file that is not a game answers 200 too, with a failed audit that says why."""
    raw = await request.body()  # at most LARGER_BODIES['/disputes']: the limits middleware
    if not raw:
        raise ApiError(422, "malformed_request", "Send the events file as the request body.")
    # A signed export ends with its seal (docs/security.md): not an event, not checked here.
    lines = [line for line in raw.splitlines() if line.strip() and not line.startswith(SEAL_LINE)]
    # An export holds the events alone, not the provenance that names its game.
    game = (game_reading(lines[0]) if lines else None) or get_game(game_names()[0])
    events, unreadable = _events_of(game, lines)
    report = unreadable or game.audit(events)
    ok = report.ok
    state = replayed(game, events if at is None else events[:at])
    finished = bool(events) and game.ends(events[-1])
    seats = _seats(game, events)
    return MsgspecResponse(
        Inspection(
            game_id=events[0].game_id if events else "",
            events=cast("list[e.AnyEvent]", list(events)),
            version=state.version if state is not None else 0,
            picture=game.picture_svg(state, _title(game, state)) if state is not None else None,
            # The platform's report and explanation (a game's explanation adds its own fields).
            audit=report,
            explanation=game.explain(events) if finished and ok else None,
            game=game.name,
            log=[words(game, event, seats) for event in events],
            table=game.table(state) if state is not None else None,
            client=plugin_of(game.name),
        )
    )


def _seats(game: AnyGame, events: list[Any]) -> list[str]:
    """The seats' names (colours) of the whole file, to tell its events; none for a file
    that cannot be folded."""
    whole = replayed(game, events)
    return list(game.table(whole).colours) if whole is not None else []


def plugin_of(name: str) -> str | None:
    """The web client's own module for a game (``static/games/<name>.js``), if it has one:
    every other game is played on the generic table."""
    return f"/static/games/{name}.js" if (STATIC / "games" / f"{name}.js").is_file() else None


def replayed(game: AnyGame, events: list[Any]) -> Any:
    """The state after ``events``, or None where they cannot be folded (a forged or broken
    file: its audit says what is wrong)."""
    try:
        return game.replay(events)
    except Exception:  # evolve applies without checks: a forged event may break anything
        return None


def _events_of(game: AnyGame, lines: list[bytes]) -> tuple[list[Any], AuditReport | None]:
    """The file's events, or the failed audit of a file that holds none or a line that is
    not an event (no message echoes more than 200 characters of it)."""
    events: list[Any] = []
    for number, line in enumerate(lines, start=1):
        try:
            events.append(game.decode_event(line))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
            # RecursionError: a line nested ~1,000 deep (a 500 otherwise)
            return [], _unreadable(number, f"line {number} is not an event: {str(error)[:200]}")
    if not events:
        return [], _unreadable(0, "the file holds no events")
    return events, None


def _unreadable(line: int, message: str) -> AuditReport:
    return failed(Finding(line, "stream", message))


def _title(game: AnyGame, state: Any) -> str:
    return f"{game.title.split(' (')[0]} game {state.game_id} after event {state.version}"


def install(app: FastAPI) -> None:
    """The pages, their assets under /static and the picture routes."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
