"""Which hosted games the services can create yet, asked of the services themselves (so that no
test names a game): a test of every game marks a game ``POST /games`` cannot create as
``xfail(strict=True)`` with the place that refuses it. Once the gateway takes the game's
creation, the mark goes by itself and the test runs in full."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from gameserver.gateway.schemas import CreateGameRequest


def creation_refused(name: str) -> str | None:
    """Why ``POST /games`` refuses a creation of the game (None: it takes one)."""
    try:
        TypeAdapter(CreateGameRequest).validate_python({"game": name, "players": 2})
    except ValidationError as error:
        refusal = error.errors()[0]["msg"]
        return (
            "services/gameserver/gateway/schemas.py names the games whose creation POST /games "
            f"takes (GameName, CreateGameRequest; games_routes._options): {refusal}"
        )
    return None


def hosted(names: Iterable[str]) -> list[Any]:
    """The games as test parameters, each the gateway cannot create yet marked strict xfail."""
    params: list[Any] = []
    for name in names:
        reason = creation_refused(name)
        mark = pytest.mark.xfail(strict=True, reason=reason) if reason else ()
        params.append(pytest.param(name, marks=mark, id=name))
    return params
