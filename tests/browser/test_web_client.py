"""The reference web client and the dispute viewer, in a real browser against the real stack.

Headless Chromium from the system packages (never a browser download), driven by Playwright:
two people play a whole 2-player game through the table page (clicking highlighted spaces and
choosing moves, one of them by keyboard only), a third watches; the dispute viewer is opened on
the finished game and on an exported file (and on a forged one); axe-core checks every page.
The stack is ``renature serve all`` (what ``make run`` starts) on a private Redis. Screenshots
of each page are written to ``var/screenshots/`` for a reviewer (``docs/screenshots/`` holds
the ones the README shows). Every other hosted game (and Renature on the generic pages) is
played through the generic table in ``test_generic_table.py``, beside this module.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page

from renature import events as e
from renature.game import replay
from support.browser_pages import (
    GAME_TIMEOUT,
    PAGE_ERRORS,
    VIEWPORTS,
    assert_accessible,
    attribute,
    logged,
    new_page,
    settled,
    shot,
    stored_events,
    upload_and_find,
)

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]

MOST_PRESSES_PER_DECISION = 3.0
"""The average number of key presses a decision may take, from the turn's start to its move."""


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
    events = stored_events(base_url, game_id)
    for page in (alice, bob, watcher):
        versions = [version for version, _ in logged(page, events[-1]["version"])]
        assert versions == [event["version"] for event in events]
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


def test_the_lobby_offers_creation_once_it_knows_the_games_and_filters_without_reloading_them(
    base_url: str, browser: Browser
) -> None:
    """The create form is the catalog's: until the catalog came, the button is not offered (a
    click on it before then created nothing, with no word); when the catalog cannot be had the
    page says so. Filtering lists games again without adding the games to the filter again."""
    page = new_page(browser)
    page.route("**/games/catalog", lambda route: route.abort())
    page.goto(f"{base_url}/")
    page.wait_for_selector("#error:not([hidden])")
    assert page.locator("#create button[type=submit]").is_disabled()
    page.unroute("**/games/catalog")
    page.goto(f"{base_url}/")
    page.wait_for_selector("#create button[type=submit]:enabled")
    kinds = page.locator("#game-filter option").count()
    assert kinds == 1 + len(httpx.get(f"{base_url}/games/catalog").json())  # "any" and each game
    for _ in range(2):
        with page.expect_response(lambda answer: "/games?" in answer.url):
            page.click("#filter button[type=submit]")
    assert page.locator("#game-filter option").count() == kinds
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
    events = [e.decode(json.dumps(raw)) for raw in stored_events(base_url, finished_game)]
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
    raw = stored_events(base_url, finished_game)
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


def state_colour(colour: int) -> str:
    from renature.components import COLOURS

    return COLOURS[colour]


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
