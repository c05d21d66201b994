"""Schemathesis as a seated player (`test_openapi_fuzz` is the anonymous run, on a stack of its
own): every request carries the seat token of a started game and its id in every path, so
commands, views and legal actions are fuzzed past authentication too."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from test_stack import E2EStack, e2e_stack

from support.openapi_fuzz import SEMANTIC_422S, run_schemathesis

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

__all__ = ["e2e_stack"]


def test_the_gateway_answers_a_seated_player_as_its_openapi_document_says(
    e2e_stack: E2EStack, tmp_path: Path
) -> None:
    """Every answer a documented status with a body that matches its schema, none a server
    error, and every service still up afterwards."""
    with httpx.Client(base_url=e2e_stack.gateway_url, timeout=30) as http:
        # A chosen deal, so that the generated commands meet the same hands in every run.
        game_id = http.post("/games", json={"players": 2, "seed": "fuzz"}).json()["game_id"]
        tokens = [
            http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"}).json()["token"]
            for seat in (0, 1)
        ]
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        assert http.post(f"/games/{game_id}/start", headers=auth).status_code == 200
    (tmp_path / "schemathesis.toml").write_text(
        'headers = { Authorization = "Bearer ${SEAT_TOKEN}" }\n\n'
        '[parameters]\n"path.game_id" = "${GAME_ID}"\n\n' + SEMANTIC_422S
    )
    run_schemathesis(
        e2e_stack.gateway_url, tmp_path, env={"SEAT_TOKEN": tokens[0], "GAME_ID": game_id}
    )
    e2e_stack.assert_all_alive()
