"""The dispute viewer says whether this server signed an uploaded export, in a real browser.

The rules service with a signing key (as it gets it from its Secret) and the gateway under
uvicorn; a game played through the HTTP API and exported with ``renature export``: uploaded to
the viewer, the page says "Signed by this server" with the key and the last signed event; a
copy with event 5 re-sealed (its hash chain recomputed) says where it differs from what was
signed, with a link to that event; a copy without its seal is "Not signed by this server".
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from msgspec.structs import replace
from playwright.async_api import Page, async_playwright
from typer.testing import CliRunner, Result

from devkit.requirements import chromium_path
from gameserver.cli import app
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import signing
from gameserver.runtime.settings import Settings
from renature import events as e
from support.gateway import gateway_settings, serving

pytestmark = [pytest.mark.browser, pytest.mark.redis]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


async def verdict(page: Page, upload: Path, status: str) -> str:
    await page.set_input_files("#file", str(upload))
    await page.wait_for_selector(f'#seal-verdict[data-status="{status}"]')
    return " ".join((await page.inner_text("#seal-verdict")).split())


async def test_the_viewer_says_whether_this_server_signed_the_upload(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "signing.pem"
    key_file.write_bytes(signing.private_pem(signing.new_key()))
    kid = signing.key_id(signing.load_private_key(key_file).public_key())
    gateway = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=10.0)
    async with (
        RulesService(
            Settings.of(
                redis_url=redis_url,
                consumer="rules-viewer-seal",
                signing_key_file=str(key_file),
            )
        ),
        gateway.router.lifespan_context(gateway),
        serving(gateway) as address,
        async_playwright() as playwright,
    ):
        url = f"http://{address}"
        async with GatewayClient(url) as client:
            game_id = (await play_game(client, 2, "viewer-seal", ["greedy", "random"])).game_id
        honest = tmp_path / "game.jsonl"
        done = await asyncio.to_thread(
            run_cli, "export", game_id, "--redis-url", redis_url, "--out", str(honest)
        )
        assert done.exit_code == 0, done.output
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        try:
            page = await (await browser.new_context()).new_page()  # under the pages' policy
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(f"{url}/viewer")
            await viewed(page, honest, kid, tmp_path)
            assert errors == []
        finally:
            await browser.close()


async def viewed(page: Page, honest: Path, kid: str, tmp_path: Path) -> None:
    """The honest export, a re-sealed copy and an unsigned copy, uploaded in turn."""
    lines = honest.read_bytes().splitlines()
    events = len(lines) - 1
    said = await verdict(page, honest, "signed")
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
    said = await verdict(page, copy, "differs")
    assert said == (
        f"Differs from what this server signed (key {kid}) at event 5: "
        "event 5 differs from what the server signed."
    )
    await page.click("#seal-verdict button")
    assert await page.inner_text("#position") == f"event 5 of {events}"

    unsigned = tmp_path / "unsigned.jsonl"
    unsigned.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    said = await verdict(page, unsigned, "not_signed")
    assert said == "Not signed by this server: the file carries no seal of the server."
