"""docs/rules-renaissance.md stays true: every ruling quotes the rule text and names tests that
exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "rules-renaissance.md"


def defined_tests() -> set[str]:
    names = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def test_every_test_the_rulings_name_exists() -> None:
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", DOC.read_text()))
    assert named
    assert named - defined_tests() == set()


def test_every_ruling_quotes_the_rule_text() -> None:
    rulings = re.split(r"\n\*\*\d+\. ", DOC.read_text())[1:]
    assert len(rulings) >= 12
    for ruling in rulings:
        assert '"' in ruling, ruling[:60]
