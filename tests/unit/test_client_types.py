"""The JavaScript client's types (``static/client/types.d.ts``) are what the gateway answers."""

from __future__ import annotations

import json
from pathlib import Path

from gameplatform import game_names
from gameserver.gateway.app import create_app
from gameserver.gateway.client_types import declarations, ts_type
from support.gateway import gateway_settings

CLIENT = Path(__file__).resolve().parents[2] / "services/gameserver/gateway/static/client"


def test_the_committed_types_are_generated_from_the_openapi_document() -> None:
    """Regenerate with ``python -m gameserver.gateway.client_types > .../client/types.d.ts``."""
    document = create_app(gateway_settings("redis://127.0.0.1:6379")).openapi()
    assert (CLIENT / "types.d.ts").read_text() == declarations(document)


def test_every_hosted_game_has_its_view_command_and_event_types() -> None:
    text = (CLIENT / "types.d.ts").read_text()
    games = text[text.index("export interface Games {") :]
    for name in game_names():
        assert f"  {json.dumps(name)}: {{" in games
    for part in ("view", "command", "event", "state", "explanation"):
        assert games.count(f"    {part}: ") == len(game_names())


def test_schemas_as_typescript() -> None:
    assert ts_type({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "number | null"
    assert ts_type({"enum": ["a", "b"]}) == '"a" | "b"'
    assert (
        ts_type({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})
        == "[string, number]"
    )
    assert (
        ts_type({"$ref": "#/components/schemas/renature.view.GameView"}) == "renature_view_GameView"
    )
    assert (
        ts_type({"type": "object", "additionalProperties": {"type": "integer"}})
        == "Record<string, number>"
    )
    assert (
        ts_type({"type": "object", "properties": {"a b": {}}, "required": []})
        == '{\n  "a b"?: unknown;\n}'
    )


def test_the_package_names_its_entry_points() -> None:
    package = json.loads((CLIENT / "package.json").read_text())
    assert package["type"] == "module"
    for name in (package["main"], package["types"], *package["files"]):
        assert (CLIENT / name).exists(), name
