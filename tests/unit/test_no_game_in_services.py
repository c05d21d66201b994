"""The services and the store know no game: everything game-specific comes from the
registry (`gameplatform.registry`, the one place that names the hosted games).

Read from the source (AST): a module of ``services/`` or ``shared/eventstore/`` may not import a
game's package, use a name a game's package defines (its commands, events, states, views: any
class or type alias of it that the platform does not define too), or hold a string that is a
game's name or the name of one of its types. The product keeps its name: the ``renature``
command, ``renature.*`` loggers, ``RENATURE_*`` variables and key prefixes are no game, so the
first hosted game's name counts only as a whole string (``"renature"``), any other game's
anywhere in a string. Docstrings and comments are prose and are not read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from gameplatform import game_names

ROOT = Path(__file__).resolve().parents[2]
CHECKED = (ROOT / "services", ROOT / "shared" / "eventstore")
PRODUCT = "renature"
"""The product's name, which is also its first game's: allowed inside longer strings."""

STILL_TO_MOVE: dict[str, set[str]] = {}
"""Files that still name a game, to be moved out: none any more. Nothing may be added."""


@cache
def game_types() -> frozenset[str]:
    """The classes and type aliases each game's package defines and the platform does not."""
    defined: set[str] = set()
    for name in game_names():
        for path in (ROOT / "shared" / name).rglob("*.py"):
            defined |= _defined(ast.parse(path.read_text()))
    platform: set[str] = set()
    for path in (ROOT / "shared" / "gameplatform").rglob("*.py"):
        platform |= _defined(ast.parse(path.read_text()))
    return frozenset(defined - platform)


@cache
def services_names() -> frozenset[str]:
    """The classes and type aliases the checked code defines itself (a route's ``At`` is no
    game's ``At``; an import of a game's type is caught as the import)."""
    names: set[str] = set()
    for folder in CHECKED:
        for path in folder.rglob("*.py"):
            names |= _defined(ast.parse(path.read_text()))
    return frozenset(names)


def _defined(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                # a capitalised name is a type (alias); CONSTANTS are values
                name = target.id if isinstance(target, ast.Name) else ""
                if name[:1].isupper() and not name.isupper():
                    names.add(name)
    return names


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of every docstring constant (module, class, function, attribute docs)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for item in body:
            if (
                isinstance(item, ast.Expr)
                and isinstance(item.value, ast.Constant)
                and isinstance(item.value.value, str)
            ):
                found.add(id(item.value))
    return found


def named_games(path: Path) -> Iterator[str]:
    """What ``path`` names of a game: ``import X``, ``type X``, ``string 'X'``."""
    tree = ast.parse(path.read_text())
    games = set(game_names())
    others = [re.compile(rf"\b{re.escape(n)}\b", re.IGNORECASE) for n in games - {PRODUCT}]
    types = game_types() - services_names()  # the services' own names are their own
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.append(node.module or "")
            for module in modules:
                if module.split(".")[0] in games:
                    yield f"import {module.split('.')[0]}"
            for alias in node.names:
                if alias.name in types:
                    yield f"type {alias.name}"
        elif isinstance(node, ast.Name) and node.id in types:
            yield f"type {node.id}"
        elif isinstance(node, ast.Attribute) and node.attr in types:
            yield f"type {node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in prose:
                continue
            text = node.value
            if (
                text.lower() in games
                or any(other.search(text) for other in others)
                or text in types
            ):
                yield f"string {text!r}"


def test_the_game_types_are_found() -> None:
    # The check reads what it looks for from the games' own packages: prove it finds some.
    assert {"GameState", "AnyCommand", "AnyEvent"} <= game_types()
    assert "Table" not in game_types()  # the platform's, not a game's


def test_the_services_and_the_store_name_no_game() -> None:
    found: dict[str, set[str]] = {}
    for folder in CHECKED:
        for path in sorted(folder.rglob("*.py")):
            named = set(named_games(path))
            if named:
                found[str(path.relative_to(ROOT))] = named
    unexpected = {
        path: sorted(named - STILL_TO_MOVE.get(path, set()))
        for path, named in found.items()
        if named - STILL_TO_MOVE.get(path, set())
    }
    assert not unexpected, f"services or the store name a game outside the registry: {unexpected}"
    moved = sorted(set(STILL_TO_MOVE) - set(found))
    assert not moved, f"these files name no game any more: take them off STILL_TO_MOVE: {moved}"


def test_the_check_sees_each_kind_of_naming(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    other = next(name for name in game_names() if name != PRODUCT)
    source.write_text(
        '"""Docstrings may say renature and ' + other + '."""\n'
        f"from {PRODUCT}.state import GameState\n"
        f"import {other}.rules\n"
        'LOGGER = "renature.gateway"\n'
        f'GAME = "{PRODUCT}"\n'
        f'HELP = "a {other.title()} game"\n'
        'KIND = "GameEnded"\n'
        "x: AnyCommand\n"
    )
    assert set(named_games(source)) == {
        f"import {PRODUCT}",
        f"import {other}",
        "type GameState",
        f"string '{PRODUCT}'",
        f"string 'a {other.title()} game'",
        "string 'GameEnded'",
        "type AnyCommand",
    }
