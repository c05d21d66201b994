"""The size rule of the code: no module over 500 lines, no function over 50 lines and no class
over 200 lines without a one-line reason written beside it, as a ``# long: <reason>`` comment:
on the line above a function or class (above its decorators), at the top of a module (above its
docstring). It holds for every package of shared/ (each game, the platform, the store, the
development kit), the services and the bench."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE, MAX_FUNCTION, MAX_CLASS = 500, 50, 200
REASON = "# long: "
SHORTEST_REASON = 12
"""A reason says why in words (``# long: a dispatch table``), not ``# long: ok``."""


def packages() -> list[Path]:
    """Every package of shared/ (a new game is covered the day it is added), the services and
    the bench."""
    shared = sorted(path for path in (ROOT / "shared").iterdir() if (path / "__init__.py").exists())
    return [*shared, ROOT / "services", ROOT / "bench"]


def _reason(line: str) -> str | None:
    """The reason a ``# long:`` comment gives, or None where the line is none."""
    line = line.strip()
    return line[len(REASON) :].strip() if line.startswith(REASON) else None


def _module_reason(lines: list[str], tree: ast.Module) -> str | None:
    """The reason among the comments above the module's first statement."""
    first = tree.body[0].lineno if tree.body else len(lines) + 1
    reasons = [r for line in lines[: first - 1] if (r := _reason(line)) is not None]
    return reasons[0] if reasons else None


def _oversized_in(path: Path, base: Path = ROOT) -> list[tuple[str, str | None]]:
    """``(what, reason)`` for each part of ``path`` over its limit (reason None: none given)."""
    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))
    where = path.relative_to(base).as_posix()
    found = []
    if len(lines) > MAX_MODULE:
        found.append((f"{where} ({len(lines)} lines)", _module_reason(lines, tree)))
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        size = (node.end_lineno or node.lineno) - node.lineno + 1
        limit = MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION
        if size <= limit:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        reason = _reason(lines[first - 2]) if first >= 2 else None
        found.append((f"{where}:{node.lineno} {node.name} ({size} lines)", reason))
    return found


def oversized() -> list[str]:
    """Every module, function or class over its limit without a reason, as ``path:line name
    (n lines)``."""
    return [
        what
        for package in packages()
        for path in sorted(package.rglob("*.py"))
        for what, reason in _oversized_in(path)
        if reason is None
    ]


def vague_reasons() -> list[str]:
    """Every ``# long:`` reason of an oversized part too short to say why."""
    return [
        f"{what}: {reason!r}"
        for package in packages()
        for path in sorted(package.rglob("*.py"))
        for what, reason in _oversized_in(path)
        if reason is not None and len(reason) < SHORTEST_REASON
    ]


def test_no_module_function_or_class_over_its_limit_without_a_reason() -> None:
    assert oversized() == []


def test_every_reason_says_why() -> None:
    assert vague_reasons() == []


def test_the_rule_covers_every_shared_package_the_services_and_the_bench() -> None:
    covered = {path.relative_to(ROOT).as_posix() for path in packages()}
    shared = {
        f"shared/{path.name}"
        for path in (ROOT / "shared").iterdir()
        if (path / "__init__.py").exists()
    }
    assert shared <= covered
    assert {"shared/gameplatform", "shared/eventstore", "shared/devkit"} <= covered
    assert {"shared/renature", "shared/renaissance", "shared/goofspiel"} <= covered
    assert {"services", "bench"} <= covered


def test_the_rule_finds_what_is_over_its_limit(tmp_path: Path) -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(MAX_FUNCTION))
    long_function = f"def f() -> None:\n{body}\n"
    long_module = '"""A module."""\n' + "\n" * MAX_MODULE
    assert [w for w, _ in _oversized_at(tmp_path, "f.py", long_function)] == ["f.py:1 f (51 lines)"]
    reasoned = f"# long: one step per line of a protocol\n{long_function}"
    assert _oversized_at(tmp_path, "g.py", reasoned)[0][1] == "one step per line of a protocol"
    assert _oversized_at(tmp_path, "m.py", long_module)[0][1] is None
    top = f"# long: the whole table of a protocol\n{long_module}"
    assert _oversized_at(tmp_path, "n.py", top)[0][1] == "the whole table of a protocol"


def _oversized_at(folder: Path, name: str, text: str) -> list[tuple[str, str | None]]:
    path = folder / name
    path.write_text(text)
    return _oversized_in(path, folder)
