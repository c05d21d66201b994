"""Comments, docstrings and documents stand on their own: none points at an issue by its number
(the word "issue" followed by a number), which a reader of the code cannot look up. Each says the
behaviour or the attack in words instead."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("shared", "services", "bench", "tests", "docs")
TEXT = {".py", ".md", ".js", ".mjs", ".ts", ".html", ".css", ".toml", ".txt", ".json"}
SKIPPED = {"__pycache__", "node_modules", ".venv"}

ISSUE_NUMBER = re.compile("\\bissues?[ \\t]*(?:no\\.?[ \\t]*)?#?[0-9]", re.IGNORECASE)
"""An issue named by its number, with or without ``#`` or ``no.`` before it, in any case (the
examples below are built with f-strings, so that this file passes its own test)."""


def scanned_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in SCANNED:
        files += [
            path
            for path in sorted((ROOT / top).rglob("*"))
            if path.is_file()
            and path.suffix in TEXT
            and not SKIPPED & set(path.relative_to(ROOT).parts)
        ]
    return files


def issue_references(text: str) -> list[str]:
    """Each line of ``text`` that names an issue by its number, with its line number."""
    return [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if ISSUE_NUMBER.search(line)
    ]


def test_the_pattern_finds_issue_numbers_and_nothing_else() -> None:
    found = [
        f"(issue {26})",
        f"Issue {23}, finding 1:",
        f"see issue #{4}",
        f"issues {3} and 4",
        f"ISSUE {9}",
        f"issue no. {7}",
    ]
    for text in found:
        assert issue_references(text), text
    for text in ["the service issues FinishGame", "issued by the host", f"tissue {3}", "an issuer"]:
        assert not issue_references(text), text


def test_no_comment_or_document_names_an_issue_by_its_number() -> None:
    files = scanned_files()
    assert ROOT / "docs" / "services.md" in files
    assert Path(__file__).resolve() in files
    found = {
        str(path.relative_to(ROOT)): lines
        for path in files
        if (lines := issue_references(path.read_text(encoding="utf-8", errors="replace")))
    }
    assert found == {}, "say the behaviour or the attack in words instead of an issue's number"
