"""The JavaScript client package (``static/client/``) in Chromium against the real stack.

The package's example page (``examples/autoplay.html``, nothing but the package) plays a whole
game of every hosted game over WebSockets; a command's answer is cut off on the wire and the
package sends it again with the same id, getting the same answer (applied once); a burst of
reads meets 429 and waits it out; a live channel whose socket drops again and again resumes
without gap or duplicate; a page whose WebSocket cannot open falls back to server-sent events.
The stack is ``renature serve all`` on a private Redis with a low read rate per address.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route

from gameplatform import game_names
from support.web_stack import serve_all

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]

EXAMPLE = "/static/client/examples/autoplay.html"
GAME_MS = 240_000
# A page that loads the package and its example, then runs a script on it.
RUN = """async ([script, arg]) => {
  const client = await import("/static/client/index.js");
  const example = await import("/static/client/examples/autoplay.js");
  const body = `return (async () => { ${script} })()`;
  return await new Function("client", "example", "arg", body)(client, example, arg);
}"""


@pytest.fixture(scope="module")
def stack() -> Iterator[str]:
    with serve_all(RENATURE_LIMIT_READ="10/second") as running:
        yield running.url


@pytest.fixture(params=[True], ids=["probed"])
def page(browser: Browser, stack: str, request: pytest.FixtureRequest) -> Iterator[Page]:
    """The example page; its probes (scripts the test runs in it) bypass the page's
    Content-Security-Policy, the example itself runs under it (``bypass_csp=False``)."""
    context = browser.new_context(base_url=stack, bypass_csp=request.param)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None
    )
    page.goto(EXAMPLE)
    page.locator("#game option").first.wait_for(state="attached")
    yield page
    context.close()
    assert errors == []


def run(page: Page, script: str, arg: Any = None) -> Any:
    return page.evaluate(RUN, [script, arg])


def gapless(versions: list[int], last: int) -> bool:
    return versions == list(range(1, last + 1))


@pytest.mark.parametrize("page", [False], ids=["under-its-policy"], indirect=True)
@pytest.mark.parametrize("game", game_names())
def test_the_example_page_plays_a_whole_game(page: Page, game: str) -> None:
    page.select_option("#game", game)
    page.click("#play")
    page.locator("#log li", has_text="over at version").or_(
        page.locator("#log li", has_text="Error")
    ).first.wait_for(timeout=GAME_MS)
    result = page.evaluate("window.result")
    assert "error" not in result, result
    table = result["table"]
    assert table["over"] is True
    assert all(gapless(versions, table["version"]) for versions in result["delivered"])
    assert page.locator("#log li").last.inner_text().startswith("over at version")


def test_a_lost_answer_is_sent_again_and_applied_once(page: Page) -> None:
    sent: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []

    def lose_the_first_answer(route: Route) -> None:
        sent.append(json.loads(route.request.post_data or "{}"))
        response = route.fetch()
        answers.append(response.json())
        if len(sent) == 1:
            route.abort("connectionreset")  # the server did it; the answer never arrives
        else:
            route.fulfill(response=response)

    page.route("**/games/*/commands", lose_the_first_answer)
    accepted = run(
        page,
        """
        const { seats } = await example.seatAll(new client.LobbyClient(), "renature");
        for (const seat of seats) {
          const legal = await seat.legalActions();
          if (legal.length) {
            const before = (await seat.summary()).version;
            const accepted = await seat.send(legal[0]);
            return { accepted, before, after: (await seat.events(before)).length };
          }
        }
        """,
    )
    assert len(sent) == 2, sent
    assert sent[0] == sent[1]  # one command id, the same command
    assert answers[0] == answers[1] == accepted["accepted"]  # the stored outcome, once
    assert accepted["after"] == accepted["accepted"]["last_version"] - accepted["before"]


def test_a_dropping_socket_resumes_without_gap_or_duplicate(page: Page) -> None:
    result = run(
        page,
        """
        let sockets = 0;
        // A socket that the network drops after a few messages, every time.
        class Dropping extends WebSocket {
          constructor(url) {
            super(url);
            sockets += 1;
            let seen = 0;
            this.addEventListener("message", () => {
              seen += 1;
              if (seen === 20) this.close(3000, "dropped");
            });
          }
        }
        const { seats } = await example.seatAll(new client.LobbyClient(), "renaissance");
        const versions = [];
        const watcher = new client.GameClient(seats[0].gameId);
        const onFrame = (f) => versions.push(f.version);
        const channel = watcher.live({ WebSocket: Dropping, onFrame });
        await example.playSeats(seats);
        const last = (await seats[0].table()).version;
        const status = await channel.done;
        return { versions, sockets, status, transport: channel.transport, last };
        """,
    )
    assert result["status"] == "ended"
    assert result["transport"] == "websocket"
    assert result["sockets"] >= 3, result["sockets"]
    versions = result["versions"]
    assert gapless(versions, result["last"]), (len(versions), versions[-5:], result["last"])


def test_no_websocket_falls_back_to_server_sent_events(page: Page) -> None:
    result = run(
        page,
        """
        class Refused {
          constructor() { setTimeout(() => this.onclose({ code: 1006 })); }
          close() {}
        }
        const lobby = new client.LobbyClient();
        const finished = await example.playWholeGame({ game: "renaissance" });
        const versions = [];
        const onFrame = (f) => versions.push(f.version);
        const channel = lobby.game(finished.gameId).live({ WebSocket: Refused, onFrame });
        const status = await channel.done;
        return { versions, status, transport: channel.transport, last: finished.table.version };
        """,
    )
    assert result["status"] == "ended"
    assert result["transport"] == "sse"
    assert gapless(result["versions"], result["last"])


def test_a_burst_of_reads_waits_429_out(page: Page) -> None:
    """Last of the module: the burst spends the address's read rate, pages included."""
    result = run(
        page,
        """
        const waits = [];
        const lobby = new client.LobbyClient({ onWait: (w) => waits.push(w) });
        const created = await lobby.create({ players: 2 });
        const spectator = lobby.game(created.game_id);
        const reads = await Promise.all(Array.from({ length: 25 }, () => spectator.summary()));
        return { ok: reads.every((r) => r.game_id === created.game_id), waits };
        """,
    )
    assert result["ok"]
    assert any(w["status"] == 429 and w["seconds"] >= 1 for w in result["waits"]), result
