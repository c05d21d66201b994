"""The dispute viewer says whether this server signed an uploaded export, in a real browser.

``renature serve all`` with a signing key (as the rules service gets it from its Secret), a
game played through the HTTP API, exported with ``renature export``: uploaded to the viewer,
the page says "Signed by this server" with the key and the last signed event; a copy with
event 5 re-sealed (its hash chain recomputed) says where it differs from what was signed, with
a link to that event; a copy without its seal is "Not signed by this server".
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from msgspec.structs import replace
from playwright.sync_api import Browser, Page, sync_playwright
from typer.testing import CliRunner

from devkit.requirements import chromium_path
from gameserver.cli import app
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.runtime import signing
from renature import events as e
from support.web_stack import Stack, serve_all

pytestmark = [pytest.mark.browser, pytest.mark.redis]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("secret") / "signing.pem"
    path.write_bytes(signing.private_pem(signing.new_key()))
    return path


@pytest.fixture(scope="module")
def stack(key_file: Path) -> Iterator[Stack]:
    with serve_all(RENATURE_SIGNING_KEY_FILE=str(key_file), RENATURE_RATE_LIMITS="off") as up:
        yield up


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with sync_playwright() as p:
        browser: Browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser.new_context().new_page()  # the pages' own security policy applies
        finally:
            browser.close()


async def played(url: str) -> str:
    async with GatewayClient(url) as client:
        return str((await play_game(client, 2, "viewer-seal", ["greedy", "random"])).game_id)


def exported(stack: Stack, game_id: str, path: Path) -> Path:
    done = CliRunner().invoke(
        app, ["export", game_id, "--redis-url", stack.redis_url, "--out", str(path)]
    )
    assert done.exit_code == 0, done.output
    return path


def verdict(page: Page, upload: Path, status: str) -> str:
    page.set_input_files("#file", str(upload))
    page.wait_for_selector(f'#seal-verdict[data-status="{status}"]')
    return " ".join(page.inner_text("#seal-verdict").split())


def test_the_viewer_says_whether_this_server_signed_the_upload(
    stack: Stack, page: Page, key_file: Path, tmp_path: Path
) -> None:
    game_id = asyncio.run(played(stack.url))
    honest = exported(stack, game_id, tmp_path / "game.jsonl")
    lines = honest.read_bytes().splitlines()
    kid = signing.key_id(signing.load_private_key(key_file).public_key())
    page.goto(f"{stack.url}/viewer")

    said = verdict(page, honest, "signed")
    events = len(lines) - 1
    signed = f"Signed by this server (key {kid}): events 1 to {events} are the ones it signed."
    assert said == signed

    forged, prev = [], ""
    for line in lines[:-1]:  # event 5 changed, the chain recomputed: only the seal can tell
        event = e.decode(line)
        event = replace(event, seat=(event.seat or 0) + 1) if event.version == 5 else event
        forged.append(e.seal(event, prev))
        prev = forged[-1].hash
    copy = tmp_path / "forged.jsonl"
    copy.write_bytes(b"".join(e.encode(event) + b"\n" for event in forged) + lines[-1] + b"\n")
    said = verdict(page, copy, "differs")
    assert said == (
        f"Differs from what this server signed (key {kid}) at event 5: "
        "event 5 differs from what the server signed."
    )
    page.click("#seal-verdict button")
    assert page.inner_text("#position") == f"event 5 of {events}"

    unsigned = tmp_path / "unsigned.jsonl"
    unsigned.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    said = verdict(page, unsigned, "not_signed")
    assert said == "Not signed by this server: the file carries no seal of the server."
