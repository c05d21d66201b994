"""Schemathesis drives every operation of the gateway's /openapi.json with generated requests,
valid and invalid, alone and in sequences (create, join, start, ...), on the whole stack of
`test_stack` (its own, in this module): every answer must be a documented status with a body
that matches its schema, and none may be a server error; the services must all still be up
afterwards. This run is anonymous; `test_openapi_fuzz_seated` sends every request as a seated
player. They are modules of their own, so that the suite's workers run them side by side.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_stack import E2EStack, e2e_stack

from support.openapi_fuzz import SEMANTIC_422S, run_schemathesis

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

__all__ = ["e2e_stack"]


def test_the_gateway_answers_anyone_as_its_openapi_document_says(
    e2e_stack: E2EStack, tmp_path: Path
) -> None:
    """Every operation fuzzed without credentials (and with whatever tokens the sequences
    create: create, join, start, ...)."""
    (tmp_path / "schemathesis.toml").write_text(SEMANTIC_422S)
    run_schemathesis(e2e_stack.gateway_url, tmp_path)
    e2e_stack.assert_all_alive()
