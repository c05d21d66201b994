"""The OpenAPI document says what the gateway really answers.

Views, states, events, audit reports and explanations are msgspec structs of the rules core,
sent as they are (``MsgspecResponse``). FastAPI cannot see their shape, so each such route
declares its body with `body` (kept in the shared `BODIES`), and `install` merges the JSON
Schemas msgspec generates for them into the document's components. Every error a route can
answer is declared with `errors`, in the common error shape.
"""

from __future__ import annotations

from typing import Any

import msgspec
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

REF_TEMPLATE = "#/components/schemas/{name}"

ERRORS = {
    400: "The body cannot be read as JSON (`malformed_request`).",
    401: "No seat token where one is needed (`missing_token`).",
    403: "The token holds no seat of this game (`invalid_token`), or the request is for "
    "another seat or not a player's to make (`wrong_seat`, `not_a_seat_command`, ...), or "
    "the game's seats are by invitation and the code is missing or wrong "
    "(`invitation_required`).",
    404: "No such game (`game_not_found`), seat (`no_such_seat`) or read model (`not_projected`).",
    409: "Refused as things stand: a rule the command breaks now (`not_your_turn`, "
    "`illegal_placement`, ...), a seat taken, a game not finished.",
    413: "The body is larger than the endpoint takes (`body_too_large`); nothing was read past "
    "the limit.",
    422: "Malformed: the body or a parameter does not match the schema "
    "(`malformed_request`), or the command names something that does not exist "
    "(`invalid_command`).",
    503: "Redis or the rules service cannot be reached, or the game is too busy; retry.",
    504: "The rules service did not answer in time; retry with the same command id.",
}


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable and machine-readable, e.g. not_your_turn")
    message: str = Field(description="A sentence a player can act on")


class ErrorBody(BaseModel):
    """Every error answer, whatever produced it."""

    error: ErrorDetail


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route, for its ``responses``."""
    return {status: {"model": ErrorBody, "description": ERRORS[status]} for status in statuses}


class Bodies:
    """The msgspec types named by routes, so their schemas can join the components."""

    def __init__(self) -> None:
        self.types: list[tuple[Any, bytes]] = []  # each type with its schema's JSON

    def body(
        self, type_: Any, description: str, *, status: int = 200
    ) -> dict[int | str, dict[str, Any]]:
        """A route's answer whose body is the msgspec type ``type_`` (for its ``responses``)."""
        (schema,), _ = msgspec.json.schema_components([type_], ref_template=REF_TEMPLATE)
        self.types.append((type_, msgspec.json.encode(schema)))
        return {
            status: {
                "description": description,
                "content": {"application/json": {"schema": schema}},
            }
        }

    def components(self, paths: bytes) -> dict[str, Any]:
        """The components of every body, in the order the bodies first appear in ``paths``
        (the encoded paths of the document), whatever order the routers were imported in."""

        def first_use(item: tuple[Any, bytes]) -> int:
            at = paths.find(item[1])
            return len(paths) if at < 0 else at

        types = [type_ for type_, _ in sorted(self.types, key=first_use)]
        _, components = msgspec.json.schema_components(types, ref_template=REF_TEMPLATE)
        return components


BODIES = Bodies()
"""The msgspec bodies of every router (each router module declares its own at import; `install`
drops the components of routers an app does not include)."""


def body(type_: Any, description: str, *, status: int = 200) -> dict[int | str, dict[str, Any]]:
    """`Bodies.body` on the routers' shared `BODIES`."""
    return BODIES.body(type_, description, status=status)


def install(app: FastAPI, bodies: Bodies, *, strip: dict[str, list[str]] | None = None) -> None:
    """Build the document with the msgspec components merged in (once, on first request).

    ``strip`` names fields a component has in Python but not on the wire (the static board of a
    ``GameState``); they are removed from its schema, and a component nothing refers to any
    more is dropped.
    """

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
        paths = msgspec.json.encode(document.get("paths", {}))
        for name, schema in bodies.components(paths).items():
            if name in schemas and schemas[name] != schema:
                raise RuntimeError(f"Two different schemas are called {name!r}.")
            schemas[name] = schema
        for name, fields in (strip or {}).items():
            component = schemas[name]
            for field in fields:
                component["properties"].pop(field, None)
                if field in component.get("required", []):
                    component["required"].remove(field)
        _drop_unreferenced(document)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def _drop_unreferenced(document: dict[str, Any]) -> None:
    """Remove components that no path and no other component refers to."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    while True:
        text = msgspec.json.encode({k: v for k, v in document.items() if k != "components"})
        others = {name: msgspec.json.encode(schema) for name, schema in schemas.items()}
        unused = [
            name
            for name in schemas
            if (ref := f'"{REF_TEMPLATE.format(name=name)}"'.encode()) not in text
            and not any(ref in body for other, body in others.items() if other != name)
        ]
        if not unused:
            return
        for name in unused:
            del schemas[name]
