"""Schemathesis against the gateway's OpenAPI document (`tests/e2e/test_openapi_fuzz.py` and
`test_openapi_fuzz_seated.py`): the run and the statuses the document allows by design."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_schemathesis(url: str, workdir: Path, env: dict[str, str] | None = None) -> str:
    """``st run`` against the gateway's document with every check; its report on failure."""
    schemathesis = Path(sys.executable).with_name("st")
    result = subprocess.run(
        [
            str(schemathesis),
            "run",
            f"{url}/openapi.json",
            "--checks=all",
            "--max-examples=30",
            "--seed=1",
            "--workers=1",  # its coverage phase is not thread-safe on Python 3.11
            # The first POST /disputes starts the dispute desk's worker process (a fresh
            # interpreter at a lower CPU priority): over 10 s on a loaded two-core machine.
            "--request-timeout=60",
            # Speed is the bench's: a response is not failed for its time short of the
            # timeout (`--checks=all` limits it to 10 s, and a CI run on a loaded machine once
            # answered a malformed command in 14.5 s).
            "--max-response-time=60",
            "--no-color",
        ],
        cwd=workdir,  # reads schemathesis.toml there; its Hypothesis database stays out too
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
    return result.stdout


SEMANTIC_422S = "".join(
    f'[[operations]]\ninclude-method = "POST"\ninclude-path = "{path}"\n'
    "checks.positive_data_acceptance.expected-statuses = "
    '["2xx", "3xx", "401", "403", "404", "409", "422", "429"]\n\n'
    for path in ("/games", "/games/{game_id}/seats/{seat}", "/games/{game_id}/seats/{seat}/reclaim")
)
"""Three operations answer a schema-valid request 422 by design, each with its own code: an
``Idempotency-Key`` sent again with another body (``idempotency_key_reused``, as the IETF
draft says), an ``id_token`` where no identity provider is configured
(``identity_not_configured``), a reclaim with both a recovery code and an ``id_token``. A
generated request may repeat a key or send both; any other 422 or a 5xx still fails."""
