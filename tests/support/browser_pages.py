"""What the web client's browser tests share: pages in fresh browser contexts (each page's script
errors kept), screenshots, the accessibility check, the viewer's upload, and a game's stored
events. The stack and the browser are the fixtures of ``tests/browser/conftest.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import redis
from playwright.sync_api import Browser, Locator, Page

from devkit.redis_server import RedisServer
from eventstore import KeyLayout

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots"
AXE = ROOT / "services/gameserver/gateway/static/vendor/axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_ERRORS: dict[int, list[str]] = {}
"""Script errors each page raised (by id of the page), asserted empty at the end."""
REDIS_OF: dict[str, str] = {}
"""The Redis under each stack, to read a game's stored events as `renature export` does."""
SERVER_OF: dict[str, RedisServer] = {}
"""The process of that Redis, for a test that crashes it."""
GAME_TIMEOUT = 240.0
"""The most seconds a whole game through the table may take."""

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
"""A phone's viewport (390x844 CSS px, touch), the size the table must fit."""
VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1400, "height": 950}},
    "phone": PHONE,
}


def new_page(browser: Browser, viewport: str = "desktop", *, bypass_csp: bool = True) -> Page:
    """A page in a fresh browser context, on a desktop or a phone viewport. The harness's own
    probes (``wait_for_function``, axe-core) are scripts the pages' Content-Security-Policy
    forbids, so they run with the policy bypassed;
    `test_the_pages_run_under_their_content_security_policy` runs the pages under it."""
    context = browser.new_context(**VIEWPORTS[viewport], bypass_csp=bypass_csp)
    page = context.new_page()
    PAGE_ERRORS[id(page)] = problems = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    return page


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def settled(page: Page) -> None:
    page.wait_for_function(
        "window.table && window.table.view && !window.table.refreshing", timeout=15000
    )


def logged(page: Page, last: int) -> list[tuple[int, str]]:
    """The table page's log (each line's version and words) once it reaches version ``last``:
    the page reads its log's lines after each live frame, so the log may trail the rest of the
    page by a read."""
    page.wait_for_function(f"window.table.version >= {last}", timeout=15000)
    lines: list[tuple[int, str]] = page.eval_on_selector_all(
        "#log li", "items => items.map(i => [Number(i.dataset.version), i.textContent])"
    )
    return [(version, text) for version, text in lines]


def upload_and_find(
    page: Page, base_url: str, folder: Path, honest: list[Any], forged: list[Any], query: str = ""
) -> Locator:
    """Upload an honest export to the viewer (its audit holds, every event told in words),
    then a forged copy: the first finding the viewer lists."""
    files = []
    for name, events in (("game.jsonl", honest), ("forged.jsonl", forged)):
        files.append(folder / name)
        files[-1].write_text("\n".join(json.dumps(event) for event in events) + "\n")
    page.goto(f"{base_url}/viewer{query}")
    page.set_input_files("#file", str(files[0]))
    page.wait_for_selector("#verdict")
    assert "The audit holds" in page.inner_text("#verdict")
    assert page.locator("#events li").count() == len(honest)
    assert "undefined" not in page.inner_text("#events")
    page.set_input_files("#file", str(files[1]))
    page.wait_for_function("document.querySelector('#verdict')?.textContent.includes('FAILS')")
    return page.locator("#findings li.finding").first


def assert_accessible(page: Page) -> None:
    """axe-core (vendored) finds no serious or critical violation on the page."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [
        (v["id"], v["help"], [n["target"] for n in v["nodes"]][:3])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


def attribute(locator: Locator, name: str) -> str:
    """An attribute the element must carry."""
    value = locator.get_attribute(name)
    assert value is not None, name
    return value


def stored_events(base_url: str, game_id: str) -> list[dict[str, Any]]:
    """The game's stored events, as ``renature export`` writes them (no blanks)."""
    with redis.Redis.from_url(REDIS_OF[base_url]) as client:
        entries = client.xrange(KeyLayout().game_key(game_id))
    return [json.loads(fields[b"event"]) for _, fields in entries]
