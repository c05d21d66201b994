"""The CLI starts without the network libraries: `renature simulate` or `renature board show`
should not wait a second for redis and httpx to import."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_imports_neither_redis_nor_httpx_until_a_command_needs_them() -> None:
    probe = (
        "import sys, gameserver.cli; "
        "print(sorted(m for m in ('redis', 'httpx', 'faststream', 'fastapi') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
