"""Every hosted game as a test parameter, named by the registry (so that no test names a game):
the services create and play every game the registry lists, so each runs in full."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest


def hosted(names: Iterable[str]) -> list[Any]:
    """The games as test parameters, each with its name as the test's id."""
    return [pytest.param(name, id=name) for name in names]
