"""The table page when its live channel says that events it showed were taken back.

Under ``appendfsync everysec`` a crash may cost Redis its last second of writes; the game goes
on from what was kept. Here the stack's Redis really comes back without its last writes (a
snapshot is saved, moves are played and shown, Redis is killed and started again from the
snapshot): the page must read the game again and show the history that stands, each version
once, not the lines it had shown past it."""

from __future__ import annotations

import uuid

import httpx
import pytest
import redis
from playwright.sync_api import Browser

from support.browser_pages import PAGE_ERRORS, SERVER_OF, logged, new_page, settled

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]


def started(http: httpx.Client) -> tuple[str, list[str]]:
    game_id = http.post("/games", json={"players": 2}).json()["game_id"]
    tokens = [
        http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"}).json()["token"]
        for seat in range(2)
    ]
    http.post(f"/games/{game_id}/start", headers=bearer(tokens[0])).raise_for_status()
    return game_id, tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play(http: httpx.Client, game_id: str, tokens: list[str], moves: int, pick: int) -> int:
    """``moves`` moves, each the ``pick``-th legal one of the seat on turn; the version after."""
    version = 0
    for _ in range(moves):
        seat = http.get(f"/games/{game_id}").json()["current_seat"]
        legal = http.get(f"/games/{game_id}/legal-actions", headers=bearer(tokens[seat])).json()
        body = {"command_id": uuid.uuid4().hex, "command": legal[pick % len(legal)]}
        answer = http.post(f"/games/{game_id}/commands", json=body, headers=bearer(tokens[seat]))
        version = answer.raise_for_status().json()["last_version"]
    return version


def test_the_table_shows_the_history_that_stands_after_a_crash_took_events_back(
    base_url: str, browser: Browser
) -> None:
    server = SERVER_OF[base_url]
    with httpx.Client(base_url=base_url, timeout=30) as http:
        game_id, tokens = started(http)
        kept = play(http, game_id, tokens, 1, pick=0)
        watcher = new_page(browser)
        watcher.goto(f"{base_url}/play/{game_id}")
        settled(watcher)
        watcher.wait_for_function("document.querySelector('#connection').textContent === 'live'")
        with redis.Redis.from_url(server.url) as client:
            client.save()  # what the disk holds from now on
        shown = play(http, game_id, tokens, 3, pick=0)
        assert [v for v, _ in logged(watcher, shown)] == list(range(1, shown + 1))
        server.stop(kill=True)  # a crash: Redis comes back with the snapshot only
        server.start()
        standing = play(http, game_id, tokens, 1, pick=-1)  # another move than before
        assert standing < shown
        watcher.wait_for_function(f"window.table.version === {standing}", timeout=20000)
        assert [v for v, _ in logged(watcher, standing)] == list(range(1, standing + 1))
        assert kept < standing
    assert not PAGE_ERRORS[id(watcher)], PAGE_ERRORS[id(watcher)]
