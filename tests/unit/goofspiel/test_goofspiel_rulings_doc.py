"""docs/rules-goofspiel.md stays true: every ruling quotes the rules text and names tests that
exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "rules-goofspiel.md"


def test_every_ruling_quotes_a_rule_and_names_tests_that_exist() -> None:
    text = DOC.read_text()
    rules = re.findall(r'^\d\. "([^"]+)"', text.split("## Rulings")[0], re.MULTILINE)
    rulings = re.split(r"\n\*\*\d+\. ", text.split("## Rulings")[1])[1:]
    assert len(rules) == 7
    assert len(rulings) >= 7
    defined = {
        node.name
        for path in Path(__file__).parent.glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
    }
    for ruling in rulings:
        quoted = " ".join(re.findall(r'"([^"]+)"', ruling)[0].split()).rstrip(".")
        assert any(quoted in " ".join(rule.split()) for rule in rules), quoted
        named = re.findall(r"`(test_[a-z0-9_]+)`", ruling)
        assert named, ruling[:60]
        assert set(named) <= defined
