"""The layout of the house: no import circle, every module on the code map, no two service
modules sharing a file name.

Read from the source (AST), never by importing. A module imports another when it holds an
``import`` or ``from ... import`` of it anywhere: at module level, inside a function or under
``if TYPE_CHECKING:`` alike (an import moved into a function hides a circle, it does not break
it). Relative imports are resolved; ``from package import name`` imports the submodule
``package.name`` when there is one, the package itself otherwise. Importing ``a.b.c`` is taken
as importing ``a.b.c`` alone: that Python runs ``a/__init__.py`` first is no dependency of the
importer's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (ROOT / "shared", ROOT / "services", ROOT)
"""The folders on the import path, most specific first (``bench`` is imported from the root)."""

CHECKED = (ROOT / "shared", ROOT / "services", ROOT / "bench")
CODE_MAP = ROOT / "docs" / "code-map.md"


def _module_name(path: Path) -> str:
    for source in SOURCES:
        if path.is_relative_to(source):
            parts = path.relative_to(source).with_suffix("").parts
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(path)


@cache
def modules() -> dict[str, Path]:
    """Every module of shared/, services/ and bench/, by its dotted name."""
    return {
        _module_name(path): path
        for folder in CHECKED
        for path in sorted(folder.rglob("*.py"))
        if "static" not in path.parts and "node_modules" not in path.parts  # the bench's npm peer
    }


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name a ``from`` import names (relative ones resolved from ``module``)."""
    if not node.level:
        return node.module or ""
    is_package = modules()[module].name == "__init__.py"
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported(module: str) -> set[str]:
    """The modules of the checked folders that ``module`` imports, anywhere in its source."""
    return _imports(module, ast.parse(modules()[module].read_text()))


def _imports(module: str, tree: ast.Module) -> set[str]:
    known = modules()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            origin = _resolve(module, node)
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                found.add(submodule if submodule in known else origin)
    return {name for name in found if name in known and name != module}


@cache
def graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(imported(module)) for module in modules()}


def _components(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _shortest_cycle(edges: dict[str, frozenset[str]], members: list[str]) -> tuple[str, ...]:
    """One shortest circle through the component's smallest module, in import order."""
    inside = set(members)
    start = members[0]
    paths: dict[str, tuple[str, ...]] = {start: (start,)}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(edges[node] & inside):
                if step == start:
                    return paths[node]
                if step not in paths:
                    paths[step] = (*paths[node], step)
                    following.append(step)
        frontier = following
    raise AssertionError(members)


def cycles() -> list[tuple[str, ...]]:
    """A circle for each group of modules that import each other, round or through others."""
    edges = graph()
    return [_shortest_cycle(edges, members) for members in _components(edges)]


def _shown(cycle: tuple[str, ...]) -> str:
    return " → ".join([*cycle, cycle[0]])


def test_no_module_imports_itself_round_a_circle() -> None:
    found = cycles()
    assert not found, "import circles:\n" + "\n".join(_shown(cycle) for cycle in found)


def test_the_graph_sees_relative_function_level_and_submodule_imports() -> None:
    source = """
import eventstore.keys
from gameserver.cli import audit_commands  # a submodule, imported as a name
from gameserver.runtime.logging import get_logger  # a name of a module
from . import http_errors  # relative
if TYPE_CHECKING:
    from gameserver.gateway.ratelimit import RateLimits
def later():
    from .expiry import TokenExpiry
"""
    assert _imports("gameserver.gateway.app", ast.parse(source)) == {
        "eventstore.keys",
        "gameserver.cli.audit_commands",
        "gameserver.runtime.logging",
        "gameserver.gateway.http_errors",
        "gameserver.gateway.ratelimit",
        "gameserver.gateway.expiry",
    }
    assert "gameserver.cli.audit_commands" in graph()["gameserver.cli"]
    assert _components({"a": frozenset({"b"}), "b": frozenset({"a"}), "c": frozenset()}) == [
        ["a", "b"]
    ]
    relative = ast.parse("from . import keys\nfrom .types import X\n").body
    assert isinstance(relative[0], ast.ImportFrom)
    assert isinstance(relative[1], ast.ImportFrom)
    assert _resolve("eventstore.api", relative[0]) == "eventstore"
    assert _resolve("eventstore", relative[1]) == "eventstore.types"


# --- the code map ---------------------------------------------------------------------------


def _sections() -> dict[str, str]:
    """The code map's sections (``## `` headings), by heading."""
    text = CODE_MAP.read_text()
    parts = re.split(r"^## (.*)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _package_of(path: Path) -> str:
    """The folder a module's section is headed by: ``shared/<package>/``,
    ``services/gameserver/`` or ``bench/``."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "shared":
        return f"shared/{parts[1]}/"
    if parts[0] == "services":
        return f"services/{parts[1]}/"
    return f"{parts[0]}/"


def _named(body: str) -> set[str]:
    """The module paths a section names in backticks (``routers/web_routes.py``)."""
    return set(re.findall(r"`([\w/]+\.py)`", body))


def unmapped() -> list[str]:
    """Every module (``__init__.py`` aside) its section of the code map does not name, in
    backticks, by its path inside the package, the end of that path or its file name."""
    sections = _sections()
    missing = []
    for path in modules().values():
        if path.name == "__init__.py":
            continue
        package = _package_of(path)
        headed = [body for heading, body in sections.items() if f"`{package}`" in heading]
        where = "/" + path.relative_to(ROOT / package).as_posix()
        if len(headed) != 1 or not any(where.endswith(f"/{name}") for name in _named(headed[0])):
            missing.append(path.relative_to(ROOT).as_posix())
    return missing


def test_every_module_is_on_the_code_map() -> None:
    assert unmapped() == [], "add these to docs/code-map.md, in their package's section"


def test_every_module_the_code_map_names_exists() -> None:
    """A ``name.py`` in a package's section is a module of that package."""
    files: dict[str, list[str]] = {}
    for path in modules().values():
        package = _package_of(path)
        files.setdefault(package, []).append("/" + path.relative_to(ROOT / package).as_posix())
    gone = []
    for heading, body in _sections().items():
        for package in [package for package in files if f"`{package}`" in heading]:
            for name in _named(body):
                if name.startswith(("shared/", "services/", "bench/", "tests/")):
                    continue  # a module outside the package, named in passing
                if not any(where.endswith(f"/{name}") for where in files[package]):
                    gone.append(f"{package} {name}")
    assert gone == []


def test_no_two_service_modules_share_a_file_name() -> None:
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "services").rglob("*.py")):
        if path.name not in {"__init__.py", "__main__.py"}:
            seen.setdefault(path.name, []).append(path.relative_to(ROOT).as_posix())
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
