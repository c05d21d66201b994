"""The JavaScript client package (``static/client/``) under Node against the real stack.

``tests/browser/js/client.test.mjs`` (Node's own test runner) plays every hosted game through
the client, loses a command's answer and sees it sent again and applied once, waits out a 429,
reads a typed error, and resumes a live channel cut mid-stream without gap or duplicate; the
package's example plays a whole game of every hosted game. The stack is ``renature serve all``
on a private Redis with a low read rate per address, so that the 429 comes from the server.
A missing ``node`` fails the test where the environment is mandatory (``devkit.requirements``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.requirements import node_path
from gameplatform import game_names
from support.web_stack import serve_all

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "services/gameserver/gateway/static/client"
NODE_TIMEOUT = 300.0


@pytest.fixture(scope="module")
def stack() -> Iterator[str]:
    # Spectator reads a few a second per address: a burst meets 429 (seat reads are apart).
    with serve_all(RENATURE_LIMIT_READ="4/second") as running:
        yield running.url


def node(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    major = subprocess.run([node_path(), "--version"], capture_output=True, text=True, check=True)
    assert int(major.stdout.strip().lstrip("v").split(".")[0]) >= 20, f"node {major.stdout} < 20"
    return subprocess.run(
        [node_path(), *args],
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        cwd=ROOT,
        env={**os.environ, "RENATURE_URL": url},
        check=False,
    )


def test_the_client_under_node(stack: str) -> None:
    run = node("--test", "--test-reporter=tap", "tests/browser/js/client.test.mjs", url=stack)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout, run.stdout[-3000:]
    assert "# pass 6" in run.stdout, run.stdout[-3000:]


@pytest.mark.parametrize("game", game_names())
def test_the_example_plays_a_whole_game(stack: str, game: str) -> None:
    run = node(str(PACKAGE / "examples/autoplay.js"), stack, game, url=stack)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["over"] is True
    assert f"created {game} {result['game_id']}" in run.stdout
