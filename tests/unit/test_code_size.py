"""The size rule of the code: no production function over 60 lines and no class over
200 lines without a one-line reason written beside it, as a ``# long: <reason>`` comment on the
line above it (above its decorators)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FUNCTION, MAX_CLASS = 60, 200


DEVELOPMENT = {"devkit"}
"""Tooling of the tests, bench and chaos harness, not production code (as tests/ and bench/)."""


def packages() -> list[Path]:
    """Every production package of shared/ (each game and its adapter, the platform, the store:
    a new game is covered the day it is added) and the services."""
    shared = sorted(
        path
        for path in (ROOT / "shared").iterdir()
        if (path / "__init__.py").exists() and path.name not in DEVELOPMENT
    )
    return [*shared, ROOT / "services"]


def oversized() -> list[str]:
    """Every function or class over its limit without a reason, as ``path:line name (n)``."""
    found = []
    for package in packages():
        for path in sorted(package.rglob("*.py")):
            lines = path.read_text().splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    continue
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                limit = MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                reason = lines[first - 2].strip() if first >= 2 else ""
                if size > limit and not reason.startswith("# long: "):
                    where = path.relative_to(ROOT)
                    found.append(f"{where}:{node.lineno} {node.name} ({size} lines)")
    return found


def test_no_function_over_60_lines_and_no_class_over_200_without_a_reason() -> None:
    assert oversized() == []


def test_the_rule_covers_every_shared_package_the_games_and_their_adapters() -> None:
    covered = {path.relative_to(ROOT).as_posix() for path in packages()}
    assert {"shared/gameplatform", "shared/renature", "shared/renaissance"} <= covered
    assert {"shared/eventstore", "services"} <= covered
