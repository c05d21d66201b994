"""Generated documents stay in step with the code they document."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gameserver.rules.rules_service import create_service
from gameserver.runtime.settings import Settings
from renature import board, commands, events

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_asyncapi_document_matches_the_rules_service() -> None:
    """docs/asyncapi.json is what ``faststream docs gen`` makes of the app (see services.md);
    regenerate it when the bus changes."""
    settings = Settings.of(redis_url="redis://127.0.0.1:6379/0", consumer="rules-1")
    generated = json.loads(create_service(settings).app.schema.to_specification().to_json())
    assert generated == json.loads((DOCS / "asyncapi.json").read_text())


@pytest.mark.parametrize(
    ("name", "kind"),
    [("events", events.AnyEvent), ("commands", commands.AnyCommand), ("board", board.BoardJson)],
)
def test_json_schemas_match_the_types(name: str, kind: object) -> None:
    """docs/schema/<name>.json is what ``renature schema <name>`` prints."""
    expected = msgspec.json.format(msgspec.json.encode(msgspec.json.schema(kind))).decode()
    assert (DOCS / "schema" / f"{name}.json").read_text() == expected + "\n"
