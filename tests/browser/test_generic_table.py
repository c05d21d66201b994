"""Every hosted game played whole through the web client's generic table, in a real browser
against the real stack: two people create (choosing the game and its options in the lobby),
invite, join, start and play; a third watches. The viewer steps through each finished game and
audits its export (and a forged copy); axe-core checks the generic pages. A game added to the
registry is tested here unchanged. (Renature's own table is ``test_web_client.py``; the two
modules run side by side, each on a stack and a browser of its own.)
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page

from gameplatform import game_names
from gameserver.gateway.routers.web_routes import plugin_of
from support.browser_pages import (
    GAME_TIMEOUT,
    PAGE_ERRORS,
    assert_accessible,
    attribute,
    logged,
    new_page,
    settled,
    shot,
    stored_events,
    upload_and_find,
)
from support.hosting import hosted

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]


GENERIC_GAMES = list(game_names())
"""Every hosted game is played through the generic table by the same test, so a game added to
the registry is tested here unchanged; a game with a module of its own in the web client
(Renature's) is asked for the generic pages (``?table=generic``), which proves them on a game
with hidden information too."""


def generic(name: str) -> str:
    """The query that asks for the generic pages of a game with a module of its own."""
    return "" if plugin_of(name) is None else "?table=generic"


def play_generic(page: Page, keyboard: bool, rng: random.Random) -> None:
    """Choose one of the moves the table lists in words, as a person would (a button; by
    keyboard when asked), and wait for the table to show its result."""
    version = page.evaluate("window.table.view.version")
    moves = page.locator("#moves button.move")
    count = moves.count()
    assert count == page.evaluate("window.table.moves.length")
    button = moves.nth(rng.randrange(count))
    assert "undefined" not in button.inner_text()
    if keyboard:
        button.focus()
        page.keyboard.press("Enter")
    else:
        button.click()
    page.wait_for_function(
        f"window.table.view.version > {version} && !window.table.refreshing", timeout=15000
    )


@pytest.fixture(scope="module", params=hosted(GENERIC_GAMES))
def generic_game(request: pytest.FixtureRequest, base_url: str, browser: Browser) -> str:
    """Two people create (choosing the game and its options in the lobby), invite, join, start
    and play a whole game of a game the web client knows nothing of, through the generic
    table; Bob by keyboard only, and a spectator watches to the end."""
    name = request.param
    alice, bob, watcher = new_page(browser), new_page(browser), new_page(browser)
    alice.goto(f"{base_url}/")
    alice.wait_for_selector(f"#create [name=game] option[value={name}]", state="attached")
    alice.select_option("#create [name=game]", name)
    catalog = {game["name"]: game for game in httpx.get(f"{base_url}/games/catalog").json()}
    for option in catalog[name]["options"]:  # the form offers each option at its default
        field = alice.locator(f"#create [name='option:{option['name']}']")
        if option["kind"] == "several":
            chosen = field.evaluate("e => [...e.selectedOptions].map((o) => o.value)")
            assert chosen == option["default"]
        elif option["kind"] != "boolean":
            shown = "" if option["default"] is None else str(option["default"])
            assert field.input_value() == shown
    shot(alice, f"lobby-{name}")
    alice.fill("#create [name=name]", "Alice")
    alice.select_option("#create [name=seating]", "invite")
    clock = catalog[name]["clock"]  # a game that takes a clock gets one, and shows it
    assert alice.locator("#create [name=clock]").is_visible() == clock
    if clock:
        alice.select_option("#create [name=clock]", "300")
    alice.click("#create button[type=submit]")
    alice.wait_for_url("**/play/**")
    game_id = alice.url.rsplit("/", 1)[1]
    assert httpx.get(f"{base_url}/games/{game_id}").json()["game"] == name
    if generic(name):
        alice.goto(f"{base_url}/play/{game_id}{generic(name)}")
    alice.wait_for_selector("#invite code")
    invitation = alice.inner_text("#invite code")
    bob.goto(invitation + generic(name).replace("?", "&"))
    bob.fill("#take-seat [name=name]", "Bob")
    bob.click("#open-seats button")
    bob.wait_for_selector("#start:not([hidden])")
    bob.click("#start")
    watcher.goto(f"{base_url}/play/{game_id}{generic(name)}")
    rng = random.Random(name)
    deadline = time.monotonic() + GAME_TIMEOUT
    moves = 0
    while time.monotonic() < deadline:
        settled(alice)
        if alice.evaluate("window.table.facts.over"):
            break
        for page, keyboard in ((alice, False), (bob, True)):
            settled(page)
            if page.evaluate("window.table.moves.length"):
                if moves == 6:
                    assert ("300 s a turn" in page.inner_text("#clock")) == clock
                    shot(page, f"table-{name}")
                play_generic(page, keyboard, rng)
                moves += 1
    else:
        pytest.fail(f"the game did not finish within {GAME_TIMEOUT} s ({moves} moves)")
    events = stored_events(base_url, game_id)
    facts = httpx.get(f"{base_url}/games/{game_id}/table").json()
    for page in (alice, bob, watcher):
        page.wait_for_function("window.table.facts && window.table.facts.over", timeout=15000)
        assert "The game is over" in page.inner_text("#status")
        for seat, (colour, score) in enumerate(zip(facts["colours"], facts["scores"], strict=True)):
            line = page.inner_text(f"#players li[data-seat='{seat}']")
            assert line.startswith(colour)
            assert f": {score} point{'' if abs(score) == 1 else 's'}" in line
        # Every event in every log once, in order, in words (the live channel, resumed or not).
        lines = logged(page, events[-1]["version"])
        assert [version for version, _ in lines] == [event["version"] for event in events]
        assert all(text and "undefined" not in text for _, text in lines)
        assert page.locator("#board svg").count() == 1
        assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]
    shot(alice, f"table-{name}-finished")
    return game_id


def test_each_game_is_played_whole_through_the_generic_table(
    generic_game: str, base_url: str
) -> None:
    assert httpx.get(f"{base_url}/games/{generic_game}").json()["phase"] == "finished"
    audit = httpx.get(f"{base_url}/games/{generic_game}/audit").json()
    assert audit["ok"], audit


def test_the_viewer_steps_through_each_game_and_audits_its_export(
    generic_game: str, base_url: str, browser: Browser, tmp_path: Path
) -> None:
    """The viewer of a stored game: the verdict, the board and the scores at chosen steps as
    the table of that step says; then the export uploaded, and a forged copy pointed at."""
    name = httpx.get(f"{base_url}/games/{generic_game}").json()["game"]
    raw = stored_events(base_url, generic_game)
    page = new_page(browser)
    page.goto(f"{base_url}/viewer/{generic_game}{generic(name)}")
    page.wait_for_selector("#verdict")
    assert "The audit holds" in page.inner_text("#verdict")
    assert page.locator("#events li").count() == len(raw)
    for step in (3, len(raw) // 2, len(raw)):
        page.fill("#slider", str(step))
        page.wait_for_function(
            f"document.querySelector('#scores').textContent.startsWith('After event {step}:')"
        )
        facts = httpx.get(f"{base_url}/games/{generic_game}/table?at={step}").json()
        for colour, score in zip(facts["colours"], facts["scores"], strict=True):
            assert f"{colour} {score}" in page.inner_text("#scores")
        assert page.locator("#board svg").count() == 1
    assert page.locator("#points li.point").count() > 0
    shot(page, f"viewer-{name}")
    assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]
    forged_events = [dict(event) for event in raw]
    target = len(forged_events) // 2
    forged_events[target]["hash"] = "0" * 64  # a link of the chain broken
    upload = new_page(browser)
    finding = upload_and_find(upload, base_url, tmp_path, raw, forged_events, generic(name))
    assert int(attribute(finding, "data-version")) == forged_events[target]["version"]
    assert not PAGE_ERRORS[id(upload)], PAGE_ERRORS[id(upload)]


@pytest.mark.parametrize("path", ["/play/{game}", "/viewer/{game}"])
def test_each_generic_page_passes_the_accessibility_check(
    path: str, generic_game: str, base_url: str, browser: Browser
) -> None:
    name = httpx.get(f"{base_url}/games/{generic_game}").json()["game"]
    page = new_page(browser)
    page.goto(base_url + path.format(game=generic_game) + generic(name))
    page.wait_for_selector("#board svg")
    page.wait_for_load_state("networkidle")
    assert_accessible(page)
    assert page.locator("#board svg").get_attribute("role") == "img"
