"""The size rule of the code: no production function over 60 lines and no class over
200 lines without a one-line reason written beside it, as a ``# long: <reason>`` comment on the
line above it (above its decorators)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["shared/renature", "shared/eventstore", "shared/renaissance", "services"]
MAX_FUNCTION, MAX_CLASS = 60, 200


def oversized() -> list[str]:
    """Every function or class over its limit without a reason, as ``path:line name (n)``."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
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
