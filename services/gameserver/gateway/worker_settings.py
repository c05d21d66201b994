"""The settings of a gateway worker process: those `gateway.server.serve` handed it.

uvicorn starts the workers as processes of their own; `serve` puts its settings (command-line
overrides included) into the environment as ``RENATURE_GATEWAY_SETTINGS`` for them, and each
worker reads them back here: its app (`gateway.server.app_factory`) and its front door
(`gateway.front_door`) alike.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from gameserver.runtime.settings import Settings

SETTINGS_ENV = "RENATURE_GATEWAY_SETTINGS"


def settings_from_env() -> Settings:
    """The settings `serve` handed to this worker, or the environment's."""
    text = os.environ.get(SETTINGS_ENV)
    if not text:
        return Settings.from_env()
    fields = {f.name for f in dataclasses.fields(Settings)} - {"consumer"}  # one per process
    values: dict[str, Any] = {k: v for k, v in json.loads(text).items() if k in fields}
    return Settings(**values)
