"""The web client's promise: a whole game through the API as two browser-like clients would play
it, every service in its own process (rules, models: the board and score projectors, clock,
gateway) on a private Redis.

Ada (host) and Bob each run a "browser app" on their own origin: CORS preflights, the lobby,
an invitation, a live channel each with the seat's view and legal actions pushed with every
event (no other request is needed to move). Bob's socket drops and resumes from the last
version without a gap or a duplicate. Then Bob goes away for good: both channels stay quiet
for more than 30 s while Bob's clock runs, the clock service claims his timeout, the rules
remove his seat, and the game finishes anyway: Ada's channel gets every event up to
``GameEnded`` and is closed with 1000; the audit re-decides the timeout from recorded times.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Origin

from devkit.redis_server import RedisServer, find_redis_server, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

ADA_ORIGIN = "https://ada.example"
BOB_ORIGIN = "https://bob.example"
PER_TURN_S = 50
"""Bob's clock: the channels idle longer than 30 s before it expires, with 20 s to spare. The
turn's clock starts when the rules service decides the move that ends Ada's turn, the test's
silence once it has that move's pushes: with 1 s to spare (31 s), a CI run on a loaded machine
saw the timeout 16.5 s after the silence began (a response elsewhere in that run took 14.5 s
too)."""
SERVICES = ("rules", "models", "clock", "gateway")  # as `serve all` runs them


@dataclass
class Stack:
    http: str
    ws: str
    logs: Path
    processes: list[subprocess.Popen[bytes]]

    def tails(self) -> str:
        return "\n".join(
            f"--- {p.name} ---\n" + "\n".join(p.read_text(errors="replace").splitlines()[-20:])
            for p in sorted(self.logs.glob("*.log"))
        )


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    assert find_redis_server(), "the end-to-end tests need redis-server on PATH"
    logs = Path(tempfile.mkdtemp(prefix="renature-browser-"))
    with RedisServer() as server:
        port = free_port()
        env = {**os.environ, "REDIS_URL": server.url, "RENATURE_LOG_LEVEL": "INFO"}
        env["RENATURE_CORS_ORIGINS"] = f"{ADA_ORIGIN},{BOB_ORIGIN}"
        env.pop("RENATURE_CONSUMER", None)
        processes = []
        for name in SERVICES:
            command = [sys.executable, "-m", "gameserver.runtime.supervisor", name]
            if name == "gateway":
                command += ["--port", str(port)]
            with (logs / f"{name}.log").open("ab") as log:
                processes.append(
                    subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
                )
        stack = Stack(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", logs, processes)
        try:
            deadline = time.monotonic() + 90  # a loaded 2-core machine starts slowly
            while True:  # up once a game can be created (gateway and rules service)
                try:
                    if httpx.post(f"{stack.http}/games", json={"players": 2}).status_code == 201:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, stack.tails()
                time.sleep(0.2)
            yield stack
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


class Browser:
    """A browser app on ``origin``: every request carries the Origin header, and a request a
    browser would preflight is preflighted first (and must be allowed)."""

    def __init__(self, stack: Stack, origin: str) -> None:
        self.stack = stack
        self.origin = origin
        self.http = httpx.AsyncClient(base_url=stack.http, headers={"Origin": origin}, timeout=15)
        self.token = ""

    async def preflight(self, method: str, url: str, headers: str) -> None:
        answer = await self.http.options(
            url,
            headers={
                "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": headers,
            },
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == self.origin
        assert method in answer.headers["access-control-allow-methods"]

    async def call(
        self, method: str, url: str, body: Any = None, token: str | None = None
    ) -> httpx.Response:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if body is not None or token:  # not a "simple" request: the browser asks first
            await self.preflight(method, url, ", ".join(h.lower() for h in headers))
        answer = await self.http.request(method, url, json=body, headers=headers)
        assert answer.headers.get("access-control-allow-origin") == self.origin
        return answer

    async def live(self, game_id: str, after: int) -> ClientConnection:
        url = f"{self.stack.ws}/games/{game_id}/live?token={self.token}&after={after}&include=view"
        return await connect(url, origin=Origin(self.origin))


async def frames(ws: ClientConnection, count: int, timeout: float = 10) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(ws.recv(), timeout)) for _ in range(count)]


async def play_turn(
    browser: Browser, game_id: str, ws: ClientConnection, last: dict[str, Any], seat: int
) -> dict[str, Any]:
    """Play the seat's whole turn from the pushed legal actions only; the last frame seen."""
    n = 0
    while last["view"]["current_seat"] == seat and last["legal_actions"]:
        action = last["legal_actions"][0]
        n += 1
        sent = await browser.call(
            "POST",
            f"/games/{game_id}/commands",
            {"command_id": f"s{seat}-{last['view']['version']}-{n}", "command": action},
            browser.token,
        )
        assert sent.status_code == 200, sent.text
        got = await frames(ws, sent.json()["version"] - last["view"]["version"])
        last = got[-1]
    return last


async def test_two_browsers_play_a_game_that_a_clock_finishes(stack: Stack) -> None:
    ada, bob = Browser(stack, ADA_ORIGIN), Browser(stack, BOB_ORIGIN)
    created = await ada.call(
        "POST",
        "/games",
        {
            "players": 2,
            "seating": "invite",
            "time_control": {"per_turn": PER_TURN_S, "on_timeout": "remove"},
        },
    )
    assert created.status_code == 201, created.text
    game = created.json()
    game_id, host = game["game_id"], game["host_token"]
    assert created.headers["location"] == f"/games/{game_id}"
    joined = await ada.call(
        "POST", f"/games/{game_id}/seats/0", {"name": "Ada", "invite": game["invite_code"]}
    )
    ada.token = joined.json()["token"]

    listed = (await bob.call("GET", "/games?open_seats=true&phase=lobby")).json()["games"]
    assert game_id in [g["game_id"] for g in listed]
    refused = await bob.call("POST", f"/games/{game_id}/seats/1", {"name": "Bob"})
    assert refused.status_code == 403
    bob_joined = await bob.call(
        "POST", f"/games/{game_id}/seats/1", {"name": "Bob", "invite": game["invite_code"]}
    )
    bob.token = bob_joined.json()["token"]
    assert (await ada.call("POST", f"/games/{game_id}/start", token=host)).status_code == 200

    ada_ws = await ada.live(game_id, 0)
    bob_ws = await bob.live(game_id, 0)
    try:
        ada_last = (await frames(ada_ws, 4))[-1]
        bob_seen = await frames(bob_ws, 4)
        assert ada_last["view"]["clock"]["running_for"] == 0
        assert ada_last["view"]["seats"][1]["name"] == "Bob"
        bob_ws.transport.abort()  # Bob's socket drops (no close handshake) ...
        ada_last = await play_turn(ada, game_id, ada_ws, ada_last, 0)
        bob_ws = await bob.live(game_id, bob_seen[-1]["event"]["version"])  # ... and resumes
        bob_seen += await frames(bob_ws, ada_last["view"]["version"] - 4)
        versions = [f["event"]["version"] for f in bob_seen]
        assert versions == list(range(1, ada_last["view"]["version"] + 1))  # no gap, no twice
        bob_last = await play_turn(bob, game_id, bob_ws, bob_seen[-1], 1)
        ada_last = (
            await frames(ada_ws, bob_last["view"]["version"] - ada_last["view"]["version"])
        )[-1]
        ada_last = await play_turn(ada, game_id, ada_ws, ada_last, 0)
        assert ada_last["view"]["current_seat"] == 1
        await bob_ws.close()  # Bob goes away for good; his turn and his clock run

        quiet_since = time.monotonic()
        first = json.loads(await asyncio.wait_for(ada_ws.recv(), PER_TURN_S + 20))
        assert time.monotonic() - quiet_since > 30  # the channel stayed up, silent, > 30 s
        assert first["event"]["type"] == "SeatTimedOut"
        rest = []
        async for raw in ada_ws:  # until the gateway closes the channel
            rest.append(json.loads(raw))
        assert ada_ws.close_code == 1000
    finally:
        await ada_ws.close()
        await bob_ws.close()
    kinds = [f["event"]["type"] for f in [first, *rest]]
    assert kinds[:3] == ["SeatTimedOut", "SeatResigned", "TurnEnded"]
    assert kinds[-1] == "GameEnded"
    final = rest[-1]
    assert final["view"]["phase"] == "finished"
    assert final["event"]["winners"] == [0]
    assert [s["status"] for s in final["view"]["seats"]] == ["playing", "removed"]
    audit = (await ada.call("GET", f"/games/{game_id}/audit")).json()
    assert audit["ok"], audit["first_bad"]
    await ada.http.aclose()
    await bob.http.aclose()
