"""What a client needs to offer and play any hosted game without knowing it: the catalog of
games (their options, seats and phases, read from the registry and from the very schema that
``POST /games`` validates), any game's table facts, the moves a seat may make and the log, both
in words (``gameplatform.words``). The web client plays every game through these.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

import msgspec
from fastapi import APIRouter, Query
from pydantic import TypeAdapter

from eventstore import MAX_VERSION
from gameplatform import game_names, get_game
from gameplatform.chain import Event
from gameplatform.creation import CreationError, read_creation
from gameplatform.interface import HostedGame, Table
from gameplatform.words import words
from gameserver.gateway.dependencies import Credentials, GameId, GatewayDep
from gameserver.gateway.openapi import body, errors
from gameserver.gateway.routers.web_routes import At, plugin_of, replayed
from gameserver.gateway.schemas import CreateGameRequest, MsgspecResponse

router = APIRouter(tags=["catalog"], default_response_class=MsgspecResponse)

After = Annotated[int, Query(ge=0, le=MAX_VERSION, description="Only events after this version")]
PLATFORM_FIELDS = frozenset({"game", "seed", "seating", "players", "board", "time_control"})
"""Fields of a creation body every game has; the rest are the game's own options."""


class Option(msgspec.Struct, frozen=True):
    """One of a game's own creation options, as ``POST /games`` takes it."""

    name: str
    kind: str
    """``choice`` (one of ``choices``; a null choice is "none"), ``several`` (a list of any of
    ``choices``), ``integer`` (``minimum`` to ``maximum``), ``boolean`` or ``text``."""
    default: Any
    description: str
    choices: list[Any] | None = None
    minimum: int | None = None
    maximum: int | None = None


class Seating(msgspec.Struct, frozen=True):
    players: int
    colours: list[str]
    """Each seat's colour (its name in the game), seat 0 first."""


class CatalogGame(msgspec.Struct, frozen=True):
    """A hosted game as a lobby offers it."""

    name: str
    """The value of ``game`` in ``POST /games`` and in the lobby's filter."""
    title: str
    player_counts: list[int]
    boards: list[str]
    """The boards (or set-ups) it is played on; the first is the default."""
    options: list[Option]
    seats: list[Seating]
    """Each player count's seats."""
    phases: list[str]
    """Every phase its games pass through (the lobby's ``phase`` filter)."""
    clock: bool
    """Whether a creation may ask for a turn clock (``time_control``)."""
    timeouts: list[str]
    """What may happen to a seat whose time runs out, as the game takes it (``on_timeout``:
    ``bot`` plays on for it, or the seat is ``remove``d)."""
    hidden_information: bool
    client: str | None
    """The web client's own module for the game (richer drawing), None: the generic table."""


class Move(msgspec.Struct, frozen=True):
    command: Any
    """The command to send as it is (``POST /games/{id}/commands``)."""
    text: str
    """The command in words."""


class LogLine(msgspec.Struct, frozen=True):
    version: int
    seat: int | None
    text: str
    """The event in words."""
    event: Any
    """The event as the reader may see it (as ``GET /games/{id}/events`` gives it)."""


@router.get(
    "/games/catalog",
    responses={**body(list[CatalogGame], "Every hosted game, the default first")},
)
async def catalog() -> MsgspecResponse:
    """Every game this server hosts, with what a creation may ask of it: player counts,
    boards, its own options (their choices and defaults), each count's seats and colours, its
    phases, whether it takes a clock."""
    return MsgspecResponse(catalog_json())


@router.get(
    "/games/{game_id}/table",
    responses={**body(Table, "The table"), **errors(404, 422, 503)},
)
async def game_table(game_id: GameId, gateway: GatewayDep, at: At = None) -> MsgspecResponse:
    """Public facts of any game: seats, their names, colours and standing, whose turn it is,
    the scores, the result; after event ``at`` when asked (the dispute viewer's steps)."""
    game, state = await gateway.games.played(game_id)
    if at is not None and at < state.version:
        past = replayed(game, (await gateway.games.events(game_id, 0))[:at])
        state = past if past is not None else state
    return MsgspecResponse(game.table(state))


@router.get(
    "/games/{game_id}/moves",
    responses={
        **body(list[Move], "Every command your seat may send now, in words"),
        **errors(401, 403, 404, 422, 503),
    },
)
async def seat_moves(
    game_id: GameId, credentials: Credentials, gateway: GatewayDep
) -> MsgspecResponse:
    """The legal actions (as ``/legal-actions`` gives them), each with its words: a client
    that knows nothing of the game offers these and sends the one chosen."""
    seat = await gateway.seated(game_id, credentials)
    game, state = await gateway.games.played(game_id)
    seats = game.table(state).colours
    return MsgspecResponse(
        [Move(command, words(game, command, seats)) for command in game.legal_actions(state, seat)]
    )


@router.get(
    "/games/{game_id}/log",
    responses={
        **body(list[LogLine], "The events after `after` in words, as you may see them"),
        **errors(403, 404, 422, 503),
    },
    openapi_extra={"security": [{}]},
)
async def game_log(
    game_id: GameId, credentials: Credentials, gateway: GatewayDep, after: After = 0
) -> MsgspecResponse:
    """The game's events after ``after`` in words, with what your seat (or a spectator,
    without a token) may not see blanked out before they are told."""
    viewer = await gateway.viewer_of(game_id, credentials)
    game, state = await gateway.games.played(game_id)
    events = await gateway.games.events(game_id, after)
    return MsgspecResponse(log_of(game, events, viewer, game.table(state).colours))


def log_of(
    game: HostedGame, events: list[Event], viewer: int | None, seats: list[str]
) -> list[LogLine]:
    """Each event as ``viewer`` may see it, and in words."""
    shown = [game.visible_event(event, viewer) for event in events]
    return [
        LogLine(event.version, getattr(event, "seat", None), words(game, event, seats), event)
        for event in shown
    ]


@cache
def catalog_json() -> bytes:
    """The catalog, worked out once (it is the registry's, fixed while the server runs)."""
    bodies = _creation_bodies()
    return msgspec.json.encode([_entry(get_game(name), bodies[name]) for name in game_names()])


def _entry(game: HostedGame, creation: dict[str, Any]) -> CatalogGame:
    properties = creation.get("properties", {})
    return CatalogGame(
        name=game.name,
        title=game.title,
        player_counts=list(game.player_counts),
        boards=list(game.boards),
        options=[
            _option(name, schema)
            for name, schema in properties.items()
            if name not in PLATFORM_FIELDS
        ],
        seats=[Seating(n, _colours(game, n)) for n in game.player_counts],
        phases=_phases(game),
        clock="time_control" in properties,
        timeouts=_timeouts(game) if "time_control" in properties else [],
        hidden_information=game.hidden_information,
        client=plugin_of(game.name),
    )


def _timeouts(game: HostedGame) -> list[str]:
    """The ``on_timeout`` values the game's own check of a creation takes."""
    taken = []
    for on_timeout in ("bot", "remove"):
        clock = {"per_turn": 300, "on_timeout": on_timeout}
        body = {"game": game.name, "players": game.player_counts[0], "time_control": clock}
        try:
            read_creation(body)
        except CreationError:
            continue
        taken.append(on_timeout)
    return taken


def _creation_bodies() -> dict[str, dict[str, Any]]:
    """Each game's creation body as ``POST /games`` validates it (its JSON schema), by the
    game it names."""
    schema = TypeAdapter(CreateGameRequest).json_schema()
    variants = schema.get("oneOf") or schema.get("anyOf") or [schema]
    found: dict[str, dict[str, Any]] = {}
    for variant in variants:
        resolved = _resolve(schema, variant)
        game = resolved.get("properties", {}).get("game", {})
        name = game.get("const", game.get("default"))
        if isinstance(name, str):
            found[name] = resolved
    return {name: found.get(name, {}) for name in game_names()}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    reference = node.get("$ref")
    if not isinstance(reference, str):
        return node
    resolved: dict[str, Any] = schema["$defs"][reference.rsplit("/", 1)[1]]
    return resolved


def _option(name: str, schema: dict[str, Any]) -> Option:
    kinds = {"integer": "integer", "boolean": "boolean"}
    kind = "choice" if "enum" in schema else kinds.get(schema.get("type", ""), "text")
    choices = schema.get("enum")
    nullable = [part for part in schema.get("anyOf", []) if "enum" in part]
    if nullable:  # one of the choices, or none (null)
        kind, choices = "choice", [*nullable[0]["enum"], None]
    elif schema.get("type") == "array" and "enum" in schema.get("items", {}):
        kind, choices = "several", schema["items"]["enum"]  # any of the choices, as a list
    return Option(
        name=name,
        kind=kind,
        default=schema.get("default"),
        description=schema.get("description", schema.get("title", name)),
        choices=choices,
        minimum=schema.get("minimum"),
        maximum=schema.get("maximum"),
    )


def _colours(game: HostedGame, players: int) -> list[str]:
    """The seats' colours of a game of ``players``, as the game deals them (a game set up in
    memory, seats taken, nothing stored)."""
    names = [f"player {seat}" for seat in range(players)]
    state = None
    for command in game.setup_commands("catalog", "catalog", players, names):
        _, state = game.execute(state, command)
    return list(game.table(state).colours) if state is not None else []


def _phases(game: HostedGame) -> list[str]:
    """The values the state's ``phase`` may take (its ``Literal``), in the game's order."""
    try:
        phase = get_type_hints(game.state_type).get("phase")
    except (NameError, TypeError):  # a state type without readable annotations
        return []
    return [str(value) for value in get_args(phase) if get_origin(phase) is Literal]
