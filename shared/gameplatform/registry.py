"""The registry of games: ``get_game("renaissance")`` and the names the CLI offers."""

from __future__ import annotations

import importlib
from functools import cache
from typing import cast

from gameplatform.interface import HostedGame

ADAPTERS = {
    "renature": "renature.adapter",
    "renaissance": "renaissance.adapter",
    "goofspiel": "goofspiel.adapter",
}
"""Every game the platform hosts, one line each: its name and the module whose ``GAME`` is its
adapter (imported on first use). The first is the default."""

GAME_NAMES = tuple(ADAPTERS)

DEFAULT_GAME = GAME_NAMES[0]
"""The game of a request, a stream or a command line that names none."""


class UnknownGame(LookupError):
    pass


@cache
def get_game(name: str) -> HostedGame:
    """The game's adapter (its modules are imported on first use)."""
    if name not in ADAPTERS:
        raise UnknownGame(f"unknown game {name!r}; the games hosted: {', '.join(GAME_NAMES)}")
    return cast(HostedGame, importlib.import_module(ADAPTERS[name]).GAME)


def game_names() -> tuple[str, ...]:
    return GAME_NAMES


def hosted_phases() -> tuple[str, ...]:
    """Every phase of every hosted game, each once, in the games' order."""
    return tuple(dict.fromkeys(phase for name in GAME_NAMES for phase in get_game(name).phases))


def most_players() -> int:
    """The most seats any hosted game has."""
    return max(max(get_game(name).player_counts) for name in GAME_NAMES)
