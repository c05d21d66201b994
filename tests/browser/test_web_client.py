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
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from playwright.sync_api import Browser, Locator, Page, sync_playwright

from devkit.requirements import chromium_path
from eventstore import KeyLayout
from gameplatform import game_names
from gameserver.gateway.routers.web_routes import plugin_of
from renature import events as e
from renature.game import replay
from support.hosting import hosted
from support.web_stack import serve_all

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
PAGE_ERRORS: dict[int, list[str]] = {}
"""Script errors each page raised (by id of the page), asserted empty at the end."""
REDIS_OF: dict[str, str] = {}
"""The Redis under each stack, to read a game's stored events as `renature export` does."""
GAME_TIMEOUT = 240.0


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """``renature serve all`` on a private Redis, as ``make run`` starts it."""
    # Two players and a spectator share one address here, and they play far faster than
    # people do: the default read rate per address would slow them down (the client waits
    # 429s out; test_limits covers the limits themselves).
    with serve_all(RENATURE_LIMIT_READ="200/second;12000/minute") as stack:
        REDIS_OF[stack.url] = stack.redis_url
        yield stack.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
"""A phone's viewport (390x844 CSS px, touch), the size the table must fit."""
VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1400, "height": 950}},
    "phone": PHONE,
}
MOST_PRESSES_PER_DECISION = 3.0
"""The average number of key presses a decision may take, from the turn's start to its move."""


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


def tap_one(page: Page) -> None:
    """One decision on a phone, by taps only: a domino (then its spaces on the board), the end
    of the turn, or the first move listed (a discard is tapped twice: it asks first). Every
    target tapped is at least 44 CSS px and nothing covers it (a tap checks that)."""
    version = page.evaluate("window.table.view.version")
    hand = page.locator("#hand button:not([disabled])")
    placing = page.evaluate("window.table.legal.some(c => c.type === 'PlaceDomino')")

    def tap(locator: Locator) -> None:
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        assert box is not None
        assert min(box["width"], box["height"]) >= 44, box
        locator.tap()

    if placing and hand.count():
        tap(hand.first)
        tap(page.locator("rect.cell.legal").first)
        if page.evaluate("!window.table.sending && window.table.chosenCell !== null"):
            tap(page.locator("rect.cell.legal").first)
    elif page.locator("#moves button[data-type=EndTurn]").count():
        tap(page.locator("#moves button[data-type=EndTurn]"))
    else:
        first = page.locator("#moves button.move").first
        discard = first.get_attribute("data-type") == "DiscardDomino"
        tap(first)
        if discard:  # it only asked: the same button, tapped again, confirms
            assert "Press again" in first.inner_text()
            tap(page.locator("#moves button.discard").first)
    page.wait_for_function(
        f"window.table.view.version > {version} && !window.table.refreshing", timeout=15000
    )


def focused_survives_a_refresh(page: Page) -> None:
    """A live refresh that changes nothing (a late frame) keeps the focus where it was: on the
    very same button, or on a board space redrawn with the picture, on the same space."""
    before = page.evaluate(
        "(() => { const a = document.activeElement; a.marked = 'yes';"
        " return [a.tagName, a.dataset.key || null]; })()"
    )
    page.evaluate("window.table.refreshNow()")
    after = page.evaluate(
        "[document.activeElement.tagName, document.activeElement.dataset.key || null,"
        " document.activeElement.marked || null]"
    )
    assert after[:2] == before
    if before[0] != "rect":
        assert after[2] == "yes"  # the same element (a property, not in its HTML), not a copy


def keys_for_one(page: Page) -> int:
    """One decision by keyboard only (no click, no focus from the test): a domino by its digit
    then Enter on the spaces the page puts the focus on, E to end the turn, else Enter on what
    the page focused. Returns the number of key presses it took."""
    version = page.evaluate("window.table.view.version")
    presses = 0

    def press(key: str) -> None:
        nonlocal presses
        presses += 1
        page.keyboard.press(key)
        page.wait_for_function(
            f"window.table.view.version > {version} || (!window.table.sending"
            " && !window.table.refreshing)",
            timeout=15000,
        )

    digit = page.evaluate(
        "[...document.querySelectorAll('#hand button')].findIndex(b => !b.disabled) + 1"
    )
    legal = page.evaluate("window.table.legal.map(c => c.type)")
    if "PlaceDomino" in legal and digit:
        press(str(digit))
    elif "EndTurn" in legal:
        press("e")
    if page.evaluate(f"window.table.view.version === {version} && !window.table.sending"):
        focused_survives_a_refresh(page)
    while page.evaluate(f"window.table.view.version === {version}"):
        assert presses < 8, "the page gave the keyboard nothing to press"
        press("Enter")
    page.wait_for_function(
        f"window.table.view.version > {version} && !window.table.refreshing", timeout=15000
    )
    return presses


@pytest.fixture(scope="module")
def finished_game(base_url: str, browser: Browser) -> str:
    """Two people create, invite, join, start and play a whole game through the table page:
    Alice on a phone by taps only, Bob by keyboard only (his key presses counted), and a
    spectator watches to the end."""
    alice, bob, watcher = new_page(browser, "phone"), new_page(browser), new_page(browser)
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
    # The host, seated, no longer sees the name and code fields.
    assert alice.locator("#take-seat [name=name]").is_hidden()
    assert alice.locator("#copy-invite").is_visible()
    bob.goto(invitation)
    bob.fill("#take-seat [name=name]", "Bob")
    bob.click("#open-seats button")
    bob.wait_for_selector("#start:not([hidden])")
    bob.click("#start")
    watcher.goto(f"{base_url}/play/{game_id}")
    deadline = time.monotonic() + GAME_TIMEOUT
    moves, presses, decisions = 0, 0, 0
    while time.monotonic() < deadline:
        settled(alice)
        if alice.evaluate("window.table.view.phase") == "finished":
            break
        for page in (alice, bob):
            settled(page)
            if page.evaluate("window.table.legal.length"):
                if moves == 6:
                    assert "300 s a turn" in page.inner_text("#clock")
                    shot(alice, "table-phone")
                    shot(bob, "table")
                if page is alice:
                    tap_one(page)
                else:
                    presses += keys_for_one(page)
                    decisions += 1
                moves += 1
    else:
        pytest.fail(f"the game did not finish within {GAME_TIMEOUT} s ({moves} moves)")
    print(f"keyboard: {presses} presses for {decisions} decisions")
    assert decisions > 20
    assert presses / decisions <= MOST_PRESSES_PER_DECISION, (presses, decisions)
    for page in (alice, bob, watcher):
        page.wait_for_function(
            "window.table.view && window.table.view.phase === 'finished'", timeout=15000
        )
        assert "The game is over" in page.inner_text("#status")
        # Names, not colours, in the result, and a final score table by source of points.
        assert "Alice" in page.inner_text("#status") or "Bob" in page.inner_text("#status")
        page.wait_for_selector("#results:not([hidden])")
        rows = page.inner_text("#results-table tbody")
        assert "Alice" in rows
        assert "Bob" in rows
        assert "Total" in page.inner_text("#results-table thead")
        assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]
    assert alice.locator("#rematch").is_visible()
    assert watcher.locator("#rematch").is_hidden()
    # Every event of the game is in every log once, in order (the live channel, resumed or not).
    events = _events(base_url, game_id)
    for page in (alice, bob, watcher):
        logged = page.eval_on_selector_all(
            "#log li", "items => items.map(i => Number(i.dataset.version))"
        )
        assert logged == [event["version"] for event in events]
    shot(bob, "table-finished")
    shot(alice, "table-finished-phone")
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
    late.evaluate("table.live.close()")
    first.click("#open-seats button")
    first.wait_for_selector("#start:not([hidden])")
    late.click("#open-seats button")
    late.wait_for_selector("#error:not([hidden])")
    assert "seat_taken" in late.inner_text("#error")
    assert late.evaluate("window.table.seat") is None
    first.reload()
    first.wait_for_selector("#start:not([hidden])")  # the seat is still the first one's


def test_a_timed_out_seat_shows_bot_and_its_player_takes_it_back(
    base_url: str, browser: Browser
) -> None:
    """Seat 0's player does not move: its time runs out and a bot plays on; the players list
    says "(bot)" and the player gets "Take my seat back", which gives the seat back to them."""
    per_turn = 8  # seat 1's turn lasts this long too: the take-back happens within it
    control = {"per_turn": per_turn, "on_timeout": "bot"}
    created = httpx.post(f"{base_url}/games", json={"players": 2, "time_control": control}).json()
    game_id = created["game_id"]
    tokens = []
    for seat in range(2):
        joined = httpx.post(f"{base_url}/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
        tokens.append(joined.json()["token"])
    host = {"Authorization": f"Bearer {created['host_token']}"}
    assert httpx.post(f"{base_url}/games/{game_id}/start", headers=host).status_code == 200
    page = new_page(browser)
    page.goto(f"{base_url}/")  # the table's origin, whose storage holds the seat
    page.evaluate(
        "([id, seat]) => localStorage.setItem(`renature:seat:${id}`, JSON.stringify(seat))",
        [game_id, {"seat": 0, "token": tokens[0]}],
    )
    page.goto(f"{base_url}/play/{game_id}")
    settled(page)
    row = page.locator("#players li[data-seat='0']")
    assert "(bot)" not in row.inner_text()
    assert page.locator("#take-back").is_hidden()
    page.wait_for_selector("#take-back:not([hidden])", timeout=(per_turn + 10) * 1000)
    assert "(bot)" in row.inner_text()
    page.click("#take-back")
    page.wait_for_selector("#take-back", state="hidden", timeout=5000)
    assert "(bot)" not in row.inner_text()
    assert page.evaluate("window.table.facts.statuses[0]") == "playing"
    events = httpx.get(f"{base_url}/games/{game_id}/events").json()
    kinds = [event["type"] for event in events]
    assert kinds.index("SeatTimedOut") < kinds.index("SeatReclaimed")
    page.wait_for_function(  # the log tells both hand-overs in words
        "document.querySelector('#log').textContent.includes('took the seat back from the bot')"
    )
    assert "ran out of time; a bot plays on." in page.inner_text("#log")
    assert not PAGE_ERRORS[id(page)], PAGE_ERRORS[id(page)]


def test_an_outage_error_clears_when_the_page_is_live_again(
    base_url: str, browser: Browser
) -> None:
    """The network drops: the failed request says so; once the page hears the server again
    (a read succeeds, or its live channel reopens), the error goes away by itself."""
    host, guest = new_page(browser), new_page(browser)
    host.goto(f"{base_url}/")
    host.click("#create button[type=submit]")
    host.wait_for_url("**/play/**")
    guest.goto(host.url)
    guest.wait_for_selector("#open-seats button")
    guest.wait_for_function("document.querySelector('#connection').textContent === 'live'")
    guest.context.set_offline(True)
    guest.click("#open-seats button")
    guest.wait_for_selector("#error:not([hidden])")
    guest.context.set_offline(False)
    guest.wait_for_selector("#error", state="hidden", timeout=20000)
    assert guest.evaluate("window.table.seat") is None
    assert not PAGE_ERRORS[id(guest)], PAGE_ERRORS[id(guest)]


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
        # The scores line is drawn beside the board, a moment apart: wait for this step's.
        page.wait_for_function(
            f"document.querySelector('#scores')?.textContent.startsWith('After event {step}:')"
        )
        scores = page.inner_text("#scores")
        for seat in state.seats:
            assert f"{state_colour(seat.colour)} {seat.score}" in scores
    # A point of the explanation leads to the event that gave it.
    point = page.locator("#points li.point").nth(2)
    version = int(attribute(point, "data-version"))
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
    assert int(attribute(finding, "data-version")) == forged_events[target]["version"]
    finding.locator("button").click()
    page.wait_for_function(
        f"document.querySelector('#position').textContent.startsWith("
        f"'event {forged_events[target]['version']} ')"
    )
    shot(page, "viewer-forged")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("path", ["/", "/play/{game}", "/viewer/{game}"])
def test_every_page_passes_the_accessibility_check(
    path: str, viewport: str, finished_game: str, base_url: str, browser: Browser
) -> None:
    """axe-core (vendored) finds no serious or critical violation, on a desktop and a phone;
    the board has a text alternative; on the phone nothing is wider than the screen (the
    board pans inside its own box) and every button is a 44 px target."""
    page = new_page(browser, viewport)
    page.goto(base_url + path.format(game=finished_game))
    page.wait_for_load_state("networkidle")
    assert_accessible(page)
    if viewport == "phone":
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        small = page.eval_on_selector_all(
            "button, select",
            "nodes => nodes.filter(n => n.offsetParent).filter(n => {"
            " const r = n.getBoundingClientRect(); return r.width < 44 || r.height < 44; })"
            ".map(n => n.outerHTML.slice(0, 80))",
        )
        assert small == []
        shot(page, f"phone-{path.split('/')[1] or 'lobby'}")
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
    """Every page is served with a policy that forbids inline scripts and framing;
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


def attribute(locator: Locator, name: str) -> str:
    """An attribute the element must carry."""
    value = locator.get_attribute(name)
    assert value is not None, name
    return value


def _events(base_url: str, game_id: str) -> list[dict[str, Any]]:
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


def test_a_seat_taken_here_is_taken_back_on_another_device_by_its_recovery_link(
    base_url: str, browser: Browser
) -> None:
    """A guest takes a seat: the page shows the seat's recovery link once. Opened in another
    browser (another device: no storage shared), the link gives that browser the seat, with a
    new link; the first device's token stops working."""
    host, guest = new_page(browser), new_page(browser)
    host.goto(f"{base_url}/")
    host.click("#create button[type=submit]")
    host.wait_for_url("**/play/**")
    game_id = host.url.rsplit("/", 1)[-1].split("?")[0]
    guest.goto(host.url)
    guest.wait_for_selector("#open-seats button")
    guest.click("#open-seats button")
    guest.wait_for_selector("#recovery:not([hidden])")
    link = guest.inner_text("#recovery code")
    assert link.startswith(f"{base_url}/play/{game_id}#recover=1.")
    old_token = guest.evaluate("window.table.seat.token")
    other = new_page(browser)  # a context of its own: another device
    other.goto(link)
    other.wait_for_function("window.table && window.table.seat && window.table.seat.seat === 1")
    assert "#recover" not in other.url  # the used code leaves the address bar
    new_link = other.inner_text("#recovery code")
    assert new_link != link
    assert "#recover=1." in new_link
    new_token = other.evaluate("window.table.seat.token")
    assert new_token != old_token
    old = httpx.get(
        f"{base_url}/games/{game_id}/view", headers={"Authorization": f"Bearer {old_token}"}
    )
    assert old.status_code == 403  # the token no longer acts for the seat
    new = httpx.get(
        f"{base_url}/games/{game_id}/view", headers={"Authorization": f"Bearer {new_token}"}
    )
    assert new.status_code == 200
    assert not PAGE_ERRORS[id(guest)], PAGE_ERRORS[id(guest)]
