"""The reference web client and the dispute viewer, in a real browser against the real stack.

Headless Chromium from the system packages (never a browser download), driven by Playwright:
two people play a whole 2-player game through the table page (clicking highlighted spaces and
choosing moves, one of them by keyboard only), a third watches; the dispute viewer is opened on
the finished game and on an exported file (and on a forged one); axe-core checks every page.
The stack is ``renature serve all`` (what ``make run`` starts) on a private Redis. Screenshots
of each page are written to ``var/screenshots/`` for a reviewer (``docs/screenshots/`` holds
the ones the README shows).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from playwright.sync_api import Browser, Locator, Page, sync_playwright

from devkit.redis_server import RedisServer, free_port
from devkit.requirements import chromium_path, require_redis_server
from eventstore import KeyLayout
from gameplatform import game_names
from gameserver.gateway.routers.web_routes import plugin_of
from renature import events as e
from renature.game import replay
from support.hosting import hosted

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]

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
STARTUP_TIMEOUT = 90.0
"""A deadline, not a wait: the stack is ready in seconds alone, in over 40 s on a loaded machine."""
PAGE_ERRORS: dict[int, list[str]] = {}
"""Script errors each page raised (by id of the page), asserted empty at the end."""
REDIS_OF: dict[str, str] = {}
"""The Redis under each stack, to read a game's stored events as `renature export` does."""
GAME_TIMEOUT = 240.0


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """``renature serve all`` on a private Redis, as ``make run`` starts it."""
    require_redis_server()
    logs = Path(tempfile.mkdtemp(prefix="renature-browser-"))
    with RedisServer() as server:
        port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": server.url,
            "RENATURE_ALLOW_CHOSEN_SEEDS": "0",
            # Two players and a spectator share one address here, and they play far faster
            # than people do: the default read rate per address would slow them down (the
            # client waits 429s out; test_limits covers the limits themselves).
            "RENATURE_LIMIT_READ": "200/second;12000/minute",
        }
        env.pop("RENATURE_CONSUMER", None)
        log = (logs / "stack.log").open("wb")
        command = [sys.executable, "-c", "from gameserver.cli import main; main()"]
        process = subprocess.Popen(
            [*command, "serve", "all", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        REDIS_OF[url] = server.url
        try:
            _wait_ready(url, process, logs / "stack.log")
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Ready once a game can be created (gateway and rules service up)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the stack exited\n{log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.post(f"{url}/games", json={"players": 2}, timeout=5).status_code == 201:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"the stack did not get ready\n{log.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def new_page(browser: Browser, *, bypass_csp: bool = True) -> Page:
    """A page in a fresh browser context. The harness's own probes (``wait_for_function``,
    axe-core) are scripts the pages' Content-Security-Policy forbids, so they run with the
    policy bypassed; `test_the_pages_run_under_their_content_security_policy` runs the pages
    under it."""
    context = browser.new_context(viewport={"width": 1400, "height": 950}, bypass_csp=bypass_csp)
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


def play_one(page: Page, keyboard: bool) -> None:
    """Make one legal move the way a person would: a domino through the board (first half,
    then second half), anything else through its button; by keyboard when asked."""
    version = page.evaluate("window.table.view.version")
    hand = page.locator("#hand button:not([disabled])")
    placing = page.evaluate("window.table.legal.some(c => c.type === 'PlaceDomino')")

    def press(locator: Locator) -> None:
        if keyboard:
            locator.focus()
            page.keyboard.press("Enter")
        else:
            locator.click()

    if placing and hand.count():
        press(hand.first)
        press(page.locator("rect.cell.legal").first)
        if page.evaluate("!window.table.sending && window.table.chosenCell !== null"):
            press(page.locator("rect.cell.legal").first)
    else:
        press(page.locator("#moves button.move").first)
    page.wait_for_function(
        f"window.table.view.version > {version} && !window.table.refreshing", timeout=15000
    )


@pytest.fixture(scope="module")
def finished_game(base_url: str, browser: Browser) -> str:
    """Two people create, invite, join, start and play a whole game through the table page;
    Bob plays by keyboard only, and a spectator watches to the end."""
    alice, bob, watcher = new_page(browser), new_page(browser), new_page(browser)
    alice.goto(f"{base_url}/")
    shot(alice, "lobby")
    alice.fill("#create [name=name]", "Alice")
    alice.select_option("#create [name=seating]", "invite")
    alice.select_option("#create [name=clock]", "300")
    alice.click("#create button[type=submit]")
    alice.wait_for_url("**/play/**")
    game_id = alice.url.rsplit("/", 1)[1]
    invitation = alice.inner_text("#invite code")
    assert f"/play/{game_id}?code=" in invitation
    # Without the code the seat stays closed, and the page says why.
    stranger = new_page(browser)
    stranger.goto(f"{base_url}/play/{game_id}")
    stranger.click("#open-seats button")
    stranger.wait_for_selector("#error:not([hidden])")
    assert stranger.evaluate("window.table.seat") is None
    bob.goto(invitation)
    bob.fill("#take-seat [name=name]", "Bob")
    bob.click("#open-seats button")
    bob.wait_for_selector("#start:not([hidden])")
    bob.click("#start")
    watcher.goto(f"{base_url}/play/{game_id}")
    deadline = time.monotonic() + GAME_TIMEOUT
    moves = 0
    while time.monotonic() < deadline:
        settled(alice)
        if alice.evaluate("window.table.view.phase") == "finished":
            break
        for page, keyboard in ((alice, False), (bob, True)):
            settled(page)
            if page.evaluate("window.table.legal.length"):
                if moves == 6:
                    assert "300 s a turn" in page.inner_text("#clock")
                    shot(page, "table")
                play_one(page, keyboard)
                moves += 1
    else:
        pytest.fail(f"the game did not finish within {GAME_TIMEOUT} s ({moves} moves)")
    for page in (alice, bob, watcher):
        page.wait_for_function(
            "window.table.view && window.table.view.phase === 'finished'", timeout=15000
        )
        assert "The game is over" in page.inner_text("#status")
        assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]
    # Every event of the game is in every log once, in order (the live channel, resumed or not).
    events = _events(base_url, game_id)
    for page in (alice, bob, watcher):
        logged = page.eval_on_selector_all(
            "#log li", "items => items.map(i => Number(i.dataset.version))"
        )
        assert logged == [event["version"] for event in events]
    shot(alice, "table-finished")
    return game_id


def test_two_people_play_a_whole_game_through_the_table(finished_game: str, base_url: str) -> None:
    summary = httpx.get(f"{base_url}/games/{finished_game}").json()
    assert summary["phase"] == "finished"
    audit = httpx.get(f"{base_url}/games/{finished_game}/audit").json()
    assert audit["ok"], audit


def test_a_refused_move_is_shown_as_a_clear_error(base_url: str, browser: Browser) -> None:
    """Two people race for the last seat: the one whose page was stale is told, in words,
    that the seat is taken, and nothing changes for the other."""
    host, first, late = new_page(browser), new_page(browser), new_page(browser)
    host.goto(f"{base_url}/")
    host.click("#create button[type=submit]")
    host.wait_for_url("**/play/**")
    table = host.url
    for page in (first, late):
        page.goto(table)
        page.wait_for_selector("#open-seats button")
    # The late page stops hearing the game, as a page on a dropped connection would.
    late.evaluate("table.socket.onclose = null; table.socket.close()")
    first.click("#open-seats button")
    first.wait_for_selector("#start:not([hidden])")
    late.click("#open-seats button")
    late.wait_for_selector("#error:not([hidden])")
    assert "seat_taken" in late.inner_text("#error")
    assert late.evaluate("window.table.seat") is None
    first.reload()
    first.wait_for_selector("#start:not([hidden])")  # the seat is still the first one's


def test_the_dispute_viewer_shows_the_board_and_scores_at_chosen_steps(
    finished_game: str, base_url: str, browser: Browser
) -> None:
    events = [e.decode(json.dumps(raw)) for raw in _events(base_url, finished_game)]
    page = new_page(browser)
    page.goto(f"{base_url}/viewer/{finished_game}")
    page.wait_for_selector("#verdict")
    assert "The audit holds" in page.inner_text("#verdict")
    for step in (5, len(events) // 2, len(events)):
        page.fill("#slider", str(step))
        page.wait_for_function(
            f"document.querySelector('#board .footer')?.textContent.includes('after event {step}.')"
        )
        state = replay(events[:step])
        assert state is not None
        dominoes = page.eval_on_selector_all(
            "#board g.domino", "gs => gs.map(g => Number(g.dataset.domino)).sort((a, b) => a - b)"
        )
        assert dominoes == sorted(d for d, _, _ in state.dominoes)
        plants = page.locator("#board circle.plant").count()
        assert plants == sum(1 for code in state.plants if code >= 0)
        scores = page.inner_text("#scores")
        for seat in state.seats:
            assert f"{state_colour(seat.colour)} {seat.score}" in scores
    # A point of the explanation leads to the event that gave it.
    point = page.locator("#points li.point").nth(2)
    version = int(point.get_attribute("data-version"))
    point.locator("button").click()
    page.wait_for_function(
        f"document.querySelector('#position').textContent.startsWith('event {version} ')"
    )
    assert page.locator(f"#events li.current[data-version='{version}']").count() == 1
    shot(page, "viewer")
    assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]


def test_the_viewer_audits_an_uploaded_file_and_points_at_a_forged_event(
    finished_game: str, base_url: str, browser: Browser, tmp_path: Path
) -> None:
    raw = _events(base_url, finished_game)
    forged_events = [dict(event) for event in raw]
    target = next(i for i, ev in enumerate(forged_events) if ev["type"] == "PlantPlaced")
    forged_events[target]["points"] += 5  # a forger's extra points
    page = new_page(browser)
    finding = upload_and_find(page, base_url, tmp_path, raw, forged_events)
    assert int(finding.get_attribute("data-version")) == forged_events[target]["version"]
    finding.locator("button").click()
    page.wait_for_function(
        f"document.querySelector('#position').textContent.startsWith("
        f"'event {forged_events[target]['version']} ')"
    )
    shot(page, "viewer-forged")


@pytest.mark.parametrize("path", ["/", "/play/{game}", "/viewer/{game}"])
def test_every_page_passes_the_accessibility_check(
    path: str, finished_game: str, base_url: str, browser: Browser
) -> None:
    """axe-core (vendored) finds no serious or critical violation; the board has a text
    alternative and every highlighted space a label."""
    page = new_page(browser)
    page.goto(base_url + path.format(game=finished_game))
    page.wait_for_load_state("networkidle")
    assert_accessible(page)
    if path != "/":
        svg = page.locator("#board svg")
        assert svg.get_attribute("role") == "img"
        title = page.eval_on_selector("#board svg", "svg => svg.querySelector('title').textContent")
        assert title.startswith("Renature game ")


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


CSP_WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""


@pytest.mark.parametrize("path", ["/", "/play/{game}", "/viewer/{game}"])
def test_the_pages_run_under_their_content_security_policy(
    path: str, finished_game: str, base_url: str, browser: Browser
) -> None:
    """Issue 23: every page is served with a policy that forbids inline scripts and framing;
    the client still draws the lobby, the table and the viewer, and nothing is blocked."""
    page = new_page(browser, bypass_csp=False)
    page.add_init_script(CSP_WATCH)
    response = page.goto(base_url + path.format(game=finished_game))
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-frame-options"] == "DENY"
    page.wait_for_load_state("networkidle")
    if path == "/":
        page.locator("#games tr").first.wait_for(timeout=15000)
    else:
        page.locator("#board svg").wait_for(timeout=15000)
    assert page.evaluate("window.__violations") == []
    assert PAGE_ERRORS[id(page)] == []


def _events(base_url: str, game_id: str) -> list[dict[str, object]]:
    """The game's stored events, as ``renature export`` writes them (no blanks)."""
    with redis.Redis.from_url(REDIS_OF[base_url]) as client:
        entries = client.xrange(KeyLayout().game_key(game_id))
    return [json.loads(fields[b"event"]) for _, fields in entries]


def state_colour(colour: int) -> str:
    from renature.components import COLOURS

    return COLOURS[colour]


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
        if option["kind"] != "boolean":
            assert field.input_value() == str(option["default"])
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
    events = _events(base_url, game_id)
    facts = httpx.get(f"{base_url}/games/{game_id}/table").json()
    for page in (alice, bob, watcher):
        page.wait_for_function("window.table.facts && window.table.facts.over", timeout=15000)
        assert "The game is over" in page.inner_text("#status")
        for seat, (colour, score) in enumerate(zip(facts["colours"], facts["scores"], strict=True)):
            line = page.inner_text(f"#players li[data-seat='{seat}']")
            assert line.startswith(colour)
            assert f": {score} point{'' if abs(score) == 1 else 's'}" in line
        # Every event in every log once, in order, in words (the live channel, resumed or not).
        logged = page.eval_on_selector_all(
            "#log li", "items => items.map(i => [Number(i.dataset.version), i.textContent])"
        )
        assert [version for version, _ in logged] == [event["version"] for event in events]
        assert all(text and "undefined" not in text for _, text in logged)
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
    raw = _events(base_url, generic_game)
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
    assert int(finding.get_attribute("data-version")) == forged_events[target]["version"]
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
