"""The registry of games: ``get_game("renaissance")`` and the names the CLI offers."""

from __future__ import annotations

from functools import cache
from typing import Any

from gameplatform.interface import Game

GAME_NAMES = ("renature", "renaissance", "goofspiel")
"""Every game the platform hosts; the first is the default."""

DEFAULT_GAME = GAME_NAMES[0]
"""The game of a request, a stream or a command line that names none."""


class UnknownGame(LookupError):
    pass


@cache
def get_game(name: str) -> Game[Any, Any, Any]:
    """The game's adapter (its modules are imported on first use)."""
    game: Game[Any, Any, Any]
    if name == "renature":
        from renature import adapter as renature_adapter

        game = renature_adapter.GAME
    elif name == "renaissance":
        from renaissance import adapter as renaissance_adapter

        game = renaissance_adapter.GAME
    elif name == "goofspiel":
        from goofspiel import adapter as goofspiel_adapter

        game = goofspiel_adapter.GAME
    else:
        raise UnknownGame(f"unknown game {name!r}; the games hosted: {', '.join(GAME_NAMES)}")
    return game


def game_names() -> tuple[str, ...]:
    return GAME_NAMES


def hosted_phases() -> tuple[str, ...]:
    """Every phase of every hosted game, each once, in the games' order."""
    return tuple(dict.fromkeys(phase for name in GAME_NAMES for phase in get_game(name).phases))


def most_players() -> int:
    """The most seats any hosted game has."""
    return max(max(get_game(name).player_counts) for name in GAME_NAMES)
