"""The game platform: the law every game shares (the hash chain, execution, rule errors, the
audit, the corpus check, whole games in process, the explanation's shape: one module each), what
a game hands the platform (``Game``), and the registry of games.

A game is a pure package (no I/O, clock or global randomness) with commands and events as
msgspec structs, ``decide``/``evolve``/``legal_actions``/``view``, bots, its components as data,
pictures, a score explanation, an audit and a corpus. ``registry.get_game(name)`` gives its
adapter; everything with I/O (CLI, services) asks the registry, never the game's modules.
"""

from gameplatform.interface import Bot, Game, HostedGame, HostedState, JsonValue, Outcome
from gameplatform.registry import UnknownGame, game_names, get_game

__all__ = [
    "Bot",
    "Game",
    "HostedGame",
    "HostedState",
    "JsonValue",
    "Outcome",
    "UnknownGame",
    "game_names",
    "get_game",
]
