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

from gameplatform.interface import JsonValue

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


def errors(*statuses: int) -> dict[int | str, dict[str, JsonValue]]:
    """The error answers of a route, for its ``responses``."""
    return {status: {"model": ErrorBody, "description": ERRORS[status]} for status in statuses}


class Bodies:
    """The msgspec types named by routes, so their schemas can join the components.

    A body may be one of several types (``body_of``: one game's view or another's). Two games
    name some types alike (``GameView``, ``GameCreated``), and msgspec then names both
    components by module; since that depends on every type of the document, the schema a
    route declares is worked out again, with the document's final names, when it is built."""

    def __init__(self) -> None:
        self.entries: list[tuple[tuple[Any, ...], bytes]] = []
        """Each body's types with the JSON of the schema declared for it at import."""

    @property
    def types(self) -> list[tuple[Any, bytes]]:
        return [(type_, schema) for types, schema in self.entries for type_ in types]

    def body(
        self, type_: Any, description: str, *, status: int = 200
    ) -> dict[int | str, dict[str, JsonValue]]:
        """A route's answer whose body is the msgspec type ``type_`` (for its ``responses``)."""
        return self.body_of((type_,), description, status=status)

    def body_of(
        self, types: tuple[Any, ...], description: str, *, status: int = 200
    ) -> dict[int | str, dict[str, JsonValue]]:
        """A route's answer whose body is one of ``types`` (each game's, for instance)."""
        schemas, _ = msgspec.json.schema_components(types, ref_template=REF_TEMPLATE)
        schema = _one_of(schemas)
        self.entries.append((types, msgspec.json.encode(schema)))
        return {
            status: {
                "description": description,
                "content": {"application/json": {"schema": schema}},
            }
        }

    def components(self, paths: bytes) -> tuple[dict[str, JsonValue], dict[bytes, JsonValue]]:
        """The components of every body, in the order the bodies first appear in ``paths``
        (the encoded paths of the document), whatever order the routers were imported in; and
        for each declared schema (as JSON) the schema with the components' final names."""

        def first_use(item: tuple[Any, bytes]) -> int:
            at = paths.find(item[1])
            return len(paths) if at < 0 else at

        types = [type_ for type_, _ in sorted(self.types, key=first_use)]
        schemas, components = msgspec.json.schema_components(types, ref_template=REF_TEMPLATE)
        named = {id(type_): schema for type_, schema in zip(types, schemas, strict=True)}
        final = {
            declared: _one_of([named[id(type_)] for type_ in body_types])
            for body_types, declared in self.entries
        }
        return components, final


def _one_of(schemas: JsonValue) -> JsonValue:
    return schemas[0] if len(schemas) == 1 else {"anyOf": list(schemas)}


BODIES = Bodies()
"""The msgspec bodies of every router (each router module declares its own at import; `install`
drops the components of routers an app does not include)."""


def body(
    type_: Any, description: str, *, status: int = 200
) -> dict[int | str, dict[str, JsonValue]]:
    """`Bodies.body` on the routers' shared `BODIES`."""
    return BODIES.body(type_, description, status=status)


def body_of(
    types: tuple[Any, ...], description: str, *, status: int = 200
) -> dict[int | str, dict[str, JsonValue]]:
    """`Bodies.body_of` on the routers' shared `BODIES`."""
    return BODIES.body_of(types, description, status=status)


def install(app: FastAPI, bodies: Bodies, *, strip: dict[str, list[str]] | None = None) -> None:
    """Build the document with the msgspec components merged in (once, on first request).

    ``strip`` names fields a component has in Python but not on the wire (the static board of a
    ``GameState``); they are removed from its schema, and a component nothing refers to any
    more is dropped.
    """

    def openapi() -> dict[str, JsonValue]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        schemas: dict[str, JsonValue] = document.setdefault("components", {}).setdefault(
            "schemas", {}
        )
        paths = msgspec.json.encode(document.get("paths", {}))
        components, final = bodies.components(paths)
        _rename_bodies(document.get("paths", {}), final)
        for name, schema in components.items():
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


def _rename_bodies(paths: dict[str, JsonValue], final: dict[bytes, JsonValue]) -> None:
    """Each declared body schema of ``paths`` replaced by its schema with the final names."""
    for operations in paths.values():
        for operation in operations.values():
            for response in operation.get("responses", {}).values():
                for content in response.get("content", {}).values():
                    declared = msgspec.json.encode(content.get("schema"))
                    if declared in final:
                        content["schema"] = final[declared]


def _drop_unreferenced(document: dict[str, JsonValue]) -> None:
    """Remove components that no path and no other component refers to."""
    schemas: dict[str, JsonValue] = document["components"]["schemas"]
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


def document_limits(app: FastAPI, *, limited: bool) -> None:
    """Add the limits' answers to every operation of the app's OpenAPI document."""
    build = app.openapi
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}

    def openapi() -> dict[str, JsonValue]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        for path, operations in document.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                if "requestBody" in operation and "413" not in responses:
                    responses["413"] = {
                        "description": "The body is larger than the endpoint takes "
                        "(`body_too_large`); nothing was read past the limit.",
                        "content": error,
                    }
                if "requestBody" in operation and "422" not in responses:
                    responses["422"] = {
                        "description": "The body nests too deep (`body_too_deep`).",
                        "content": error,
                    }
                if limited and path != "/healthz":
                    responses["429"] = {
                        "description": "Over a rate limit (`rate_limited`); retry after "
                        "`Retry-After` seconds. Nothing of the request was done.",
                        "headers": {
                            "Retry-After": {
                                "description": "Seconds to wait",
                                "schema": {"type": "integer", "minimum": 1},
                            }
                        },
                        "content": error,
                    }
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
