"""Schemathesis drives every operation of the gateway's /openapi.json with generated requests,
valid and invalid, alone and in sequences (create, join, start, ...), on the whole stack of
`test_stack` (its own, in this module): every answer must be a documented status with a body
that matches its schema, and none may be a server error; the services must all still be up
afterwards. This run is anonymous; `test_openapi_fuzz_seated` sends every request as a seated
player. They are modules of their own, so that the suite's workers run them side by side.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_stack import E2EStack, e2e_stack

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

__all__ = ["SEMANTIC_422S", "assert_all_up", "e2e_stack", "run_schemathesis"]


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


def assert_all_up(stack: E2EStack) -> None:
    dead = [name for name, service in stack.services.items() if not service.alive]
    assert not dead, f"{dead} died\n{stack.logs()}"


def test_the_gateway_answers_anyone_as_its_openapi_document_says(
    e2e_stack: E2EStack, tmp_path: Path
) -> None:
    """Every operation fuzzed without credentials (and with whatever tokens the sequences
    create: create, join, start, ...)."""
    (tmp_path / "schemathesis.toml").write_text(SEMANTIC_422S)
    run_schemathesis(e2e_stack.gateway_url, tmp_path)
    assert_all_up(e2e_stack)
