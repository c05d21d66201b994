"""What a new game is asked with, for every hosted game: read, checked and described once.

A creation names its ``game`` (the default game when it names none), ``players`` (one of the
game's ``player_counts``; it may be left out where a game has one count), ``board`` (one of its
``boards``, the first by default), an optional ``seed`` and its ``seating``, and then the game's
own options (the fields of its ``options_type``). Whatever else it carries is refused, naming
the field and the game: nothing is guessed and nothing unknown is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, Protocol

import msgspec

from gameplatform.interface import HostedGame
from gameplatform.registry import DEFAULT_GAME, UnknownGame, game_names, get_game

BASICS = ("game", "players", "board", "seed", "seating")
"""The fields every game's creation has; the rest are the game's options."""

Seed = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class Creation(Protocol):
    """A creation as `creation_type` reads it: the basics every game's creation has (its
    options are the game's own struct, `options_of`)."""

    @property
    def game(self) -> str: ...

    @property
    def players(self) -> int: ...

    @property
    def board(self) -> str: ...

    @property
    def seed(self) -> str | None: ...

    @property
    def seating(self) -> Literal["open", "invite"]: ...


Asked = tuple[HostedGame, Creation, msgspec.Struct]
"""What a creation's body asks for (`read_creation`): the game, the creation, the options."""


class CreationError(ValueError):
    """A creation that cannot be made: the message names the field (and the game)."""


class NotHosted(CreationError):
    """A creation of a game this platform does not host: the message lists the hosted ones."""


def options_of(game: HostedGame, given: Mapping[str, Any]) -> msgspec.Struct:
    """The game's options struct from ``given`` (its defaults for what is left out); a
    `CreationError` naming the game for a field it does not take or a value it refuses."""
    try:
        options: msgspec.Struct = msgspec.convert(dict(given), game.options_type)
    except msgspec.ValidationError as error:
        raise CreationError(_worded(game, error)) from None
    problem = getattr(options, "problem", None)
    reason = problem() if problem is not None else None
    if reason is not None:
        raise CreationError(f"A {game.name} game: {reason}")
    return options


def options_dict(options: msgspec.Struct) -> dict[str, Any]:
    """The options as the adapters take them (``options`` arguments): field name to value."""
    return {name: getattr(options, name) for name in options.__struct_fields__}


def _worded(game: HostedGame, error: msgspec.ValidationError) -> str:
    takes = ", ".join(creation_fields(game))
    return f"{error} (a {game.name} game takes {takes})"


def creation_fields(game: HostedGame) -> tuple[str, ...]:
    return (*BASICS, *game.options_type.__struct_fields__)


@cache
def creation_type(name: str) -> Any:
    """The msgspec struct of a creation of game ``name`` (``New<Name>Game``): every field a
    creation of it may carry, typed, unknown fields forbidden."""
    game = get_game(name)
    counts: Any = Literal[game.player_counts]
    boards: Any = Literal[game.boards]
    one_count = len(game.player_counts) == 1  # the count may be left out
    players: Any = ("players", counts, game.player_counts[0]) if one_count else ("players", counts)
    fields: list[Any] = [
        ("game", Literal[name], name),
        players,
        ("board", boards, game.boards[0]),
        ("seed", Seed | None, None),
        ("seating", Literal["open", "invite"], "open"),
    ]
    for field in msgspec.structs.fields(game.options_type):
        default: Any = field.default
        if field.default_factory is not msgspec.NODEFAULT:  # a list's ``[]``: a fresh one each
            default = msgspec.field(default_factory=field.default_factory)
        fields.append((field.name, field.type, default))
    return msgspec.defstruct(
        f"New{name.title()}Game",
        fields,
        kw_only=True,
        forbid_unknown_fields=True,
        frozen=True,
        module=__name__,
    )


def game_asked(body: Mapping[str, Any]) -> HostedGame:
    """The game a creation names (the default game when it names none)."""
    name = body.get("game", DEFAULT_GAME)
    if not isinstance(name, str):
        raise NotHosted(f"game: one of {', '.join(game_names())}, not {name!r}.")
    try:
        return get_game(name)
    except UnknownGame as error:
        raise NotHosted(f"game: {error}") from None


def read_creation(body: Mapping[str, Any]) -> Asked:
    """The game, the creation (its `creation_type`) and the game's options from a body; a
    `CreationError` saying what is wrong with it."""
    game = game_asked(body)
    try:
        creation: Creation = msgspec.convert(dict(body), creation_type(game.name))
    except msgspec.ValidationError as error:
        raise CreationError(_worded(game, error)) from None
    given = {name: getattr(creation, name) for name in game.options_type.__struct_fields__}
    return game, creation, options_of(game, msgspec.to_builtins(given))
