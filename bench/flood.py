"""The gateway under a flood: do normal players keep their latency while others hammer it?

A private ``redis-server``, one rules service and one gateway (separate processes, the gateway
on a free port with its rate limits and front door on, as in production). Normal players play
2-player games (read whose turn it is, ask the legal actions, send one: three requests per
move) and every request's latency is kept; each game is created from an address of its own
(127.0.1.N), and the seat bucket is raised for these bots, which move far faster than people
(``RENATURE_LIMIT_SEAT``). Each flood (an attack of the network threat model, docs/security.md)
runs in another process beside them, one at a time, from other loopback addresses (on Linux
the whole 127/8 is local); the floods themselves are `bench.flood_attacks` (an attacker that
never waits out a ``Retry-After``, at a fixed offered rate):

- ``proxy``: everyone behind one address (127.0.0.2, an ingress the gateway does not trust): the
  players' moves and reads go through it too, while the flood sends made-up tokens from it;
- ``bearers``: random ``Authorization: Bearer`` on the routes that ignore tokens (audit,
  explanation, spectator view, summary);
- ``disputes``: uploads of a 1 MB events file to ``POST /disputes``;
- ``half-open``: connections that send a head and never finish it, re-opened as they are closed;
- ``spectators``: live WebSockets to a finished game (its whole history each), 300 at a time
  from many addresses, opened at 1,000 a second in all whatever they are answered.

Printed for each: the normal players' p50/p99 beside it (with how many requests and moves it
stands on, and how many of the players' requests were refused: none should be), their p99
against the same players alone (target: within 3x), and what the flood sent a second and was
answered. The scenarios take turns for a few rounds, so that a change of the machine's load
falls on all of them alike.

``python -m bench --only flood``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.flood_attacks import SHARED
from bench.processes import serve, stop_processes
from devkit.redis_server import RedisServer, free_port

WINDOW_S = 6.0
ROUNDS = 3
"""Each scenario is measured for ``ROUNDS`` windows of ``WINDOW_S``: on a loaded 2-core machine
that is several hundred moves (over a thousand requests) per scenario, so that the p99 stands
on a dozen or more samples rather than two or three."""
NORMAL_GAMES = 4
TARGET_RATIO = 3.0
PATTERNS = ("proxy", "bearers", "disputes", "half-open", "spectators")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def services(redis_url: str, workdir: Path) -> Iterator[str]:
    """A rules service and a gateway (limits on) on one Redis; yields the gateway's URL."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "RENATURE_LOG_LEVEL": "WARNING",
        "RENATURE_LIMIT_SEAT": "500/second",
        "RENATURE_RATE_LIMITS": "on",
    }
    env.pop("RENATURE_TRUSTED_PROXIES", None)  # the shared address is no trusted proxy
    port = free_port()
    started = [
        serve(workdir / "rules.log", env, "rules"),
        serve(workdir / "gateway.log", env, "gateway", "--port", str(port)),
    ]
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # a loaded machine starts them slowly
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                raise RuntimeError(f"the gateway did not start (logs in {workdir})")
            time.sleep(0.1)
        yield url
    finally:
        stop_processes(started, grace_s=5)


# -- normal players --------------------------------------------------------------------------


class Timed:
    """An HTTP client that keeps the latency of every request (seconds) and its status."""

    def __init__(self, url: str, local_address: str = "127.0.0.1") -> None:
        transport = httpx.AsyncHTTPTransport(local_address=local_address, retries=0)
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        self.http = httpx.AsyncClient(base_url=url, transport=transport, timeout=30, limits=limits)
        self.latencies: list[float] = []
        self.statuses: Counter[int] = Counter()

    async def request(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        start = time.perf_counter()
        response = await self.http.request(method, path, **kwargs)  # type: ignore[arg-type]
        self.latencies.append(time.perf_counter() - start)
        self.statuses[response.status_code] += 1
        return response


async def new_game(client: Timed) -> tuple[str, list[str]]:
    created = await client.request("POST", "/games", json={"players": 2})
    created.raise_for_status()
    game_id = created.json()["game_id"]
    tokens = []
    for seat in range(2):
        joined = await client.request("POST", f"/games/{game_id}/seats/{seat}", json={"name": "n"})
        joined.raise_for_status()
        tokens.append(joined.json()["token"])
    started = await client.request("POST", f"/games/{game_id}/start", headers=auth(tokens[0]))
    started.raise_for_status()
    return game_id, tokens


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


_ADDRESSES = (f"127.0.{1 + n // 250}.{1 + n % 250}" for n in range(60_000))


@dataclass
class Played:
    """What the normal players saw: every request's latency (s), the answers, the moves."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    moves: int = 0

    def add(self, other: Played) -> None:
        self.latencies += other.latencies
        self.statuses.update(other.statuses)
        self.moves += other.moves


async def play(url: str, played: Played, until: float, via: str | None) -> str | None:
    """Play games until ``until``, each created from a new address and played from it (or
    from ``via``, a shared address); the id of the last game finished, if any."""
    finished = None
    while time.monotonic() < until:
        setup = Timed(url, next(_ADDRESSES))
        client = Timed(url, via) if via else setup
        for timed in {setup, client}:
            timed.latencies, timed.statuses = played.latencies, played.statuses
        try:
            finished = await play_one(setup, client, until, played) or finished
        finally:
            await setup.http.aclose()
            await client.http.aclose()
    return finished


async def play_one(setup: Timed, client: Timed, until: float, played: Played) -> str | None:
    """One game, until its end or ``until``; its id if it ended."""
    game_id, tokens = await new_game(setup)
    for number in range(5_000):
        summary = await client.request("GET", f"/games/{game_id}/view", headers=auth(tokens[0]))
        if summary.json()["phase"] in ("final_scoring", "finished"):
            return game_id
        token = tokens[summary.json()["current_seat"]]
        legal = await client.request("GET", f"/games/{game_id}/legal-actions", headers=auth(token))
        move = {"command_id": f"m{number}", "command": legal.json()[0]}
        await client.request("POST", f"/games/{game_id}/commands", json=move, headers=auth(token))
        played.moves += 1
        if time.monotonic() >= until:
            break
    return None


async def normal_players(url: str, window_s: float, via: str | None) -> Played:
    played = Played()
    until = time.monotonic() + window_s
    await asyncio.gather(*(play(url, played, until, via) for _ in range(NORMAL_GAMES)))
    return played


async def a_finished_game(url: str) -> str:
    finished = None
    while finished is None:
        finished = await play(url, Played(), time.monotonic() + 60, None)
    async with httpx.AsyncClient(base_url=url) as http:
        while (await http.get(f"/games/{finished}")).json()["phase"] != "finished":
            await asyncio.sleep(0.05)
    return finished


# -- the floods (their own process: bench.flood_attacks) ----------------------------------------


def start_flood(
    url: str, finished: str, seconds: float, pattern: str, events: str
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.flood_attacks", url, finished, str(seconds), pattern],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "FLOOD_EVENTS": events},
        stdout=subprocess.PIPE,
        stderr=None,  # a failing flood says why
    )


# -- the figures -----------------------------------------------------------------------------


def line(label: str, played: Played, alone_p99: float | None) -> str:
    ms = [x * 1000 for x in played.latencies]
    p99 = percentile(ms, 0.99)
    versus = ""
    if alone_p99:
        ratio = p99 / alone_p99
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        versus = f"  {ratio:4.1f}x alone ({verdict} {TARGET_RATIO:.0f}x)"
    failed = sum(n for status, n in played.statuses.items() if status >= 400)
    return (
        f"  {label:<12} p50 {percentile(ms, 0.5):6.1f} ms  p99 {p99:7.1f} ms"
        f"  ({len(ms)} requests, {played.moves} moves, {failed} refused){versus}"
    )


def flood_line(results: list[dict[str, object]]) -> str:
    """What the attacker sent a second, and what it was answered (``closed``: the gateway
    closed the connection; ``held``: a half-open connection still open at the end)."""
    statuses: Counter[str] = Counter()
    frames = 0
    for result in results:
        found = result["statuses"]
        assert isinstance(found, dict)
        statuses.update({str(k): int(v) for k, v in found.items()})
        frames += int(str(result.get("frames", 0)))
    total = sum(statuses.values())
    shown = ", ".join(f"{k}: {v}" for k, v in statuses.most_common(4))
    pushed = f", {frames / (WINDOW_S * ROUNDS):.0f} frames/s pushed" if frames else ""
    return f"  {'':<12} the flood: {total / (WINDOW_S * ROUNDS):.0f}/s ({shown}){pushed}"


def measure(redis_url: str, workdir: Path) -> list[str]:
    """Every scenario for ``WINDOW_S`` per round, taking turns for ``ROUNDS`` rounds."""
    scenarios = ("alone", *PATTERNS)
    played: dict[str, Played] = {label: Played() for label in scenarios}
    floods: dict[str, list[dict[str, object]]] = {label: [] for label in scenarios}
    with services(redis_url, workdir) as url:
        finished = asyncio.run(a_finished_game(url))
        events = httpx.get(f"{url}/games/{finished}/events", timeout=30).text
        for _ in range(ROUNDS):
            for label in scenarios:
                flooding = label != "alone"
                process = start_flood(url, finished, WINDOW_S, label, events) if flooding else None
                via = SHARED if label == "proxy" else None
                played[label].add(asyncio.run(normal_players(url, WINDOW_S, via)))
                if process is not None:
                    stdout, _ = process.communicate(timeout=WINDOW_S + 60)
                    floods[label].append(json.loads(stdout.decode().strip().splitlines()[-1]))
    alone = percentile([x * 1000 for x in played["alone"].latencies], 0.99)
    out = [line("alone", played["alone"], None)]
    for label in PATTERNS:
        out.append(line(label, played[label], alone))
        out.append(flood_line(floods[label]))
    return out


def run() -> None:
    print(
        f"\n== Gateway under a flood: {NORMAL_GAMES} normal 2-player games at a time beside "
        f"each flood of the threat model ({', '.join(PATTERNS)}); {ROUNDS} rounds of "
        f"{WINDOW_S:.0f} s each; a normal player's p99 against the same players alone =="
    )
    try:
        server = RedisServer().start()
    except Exception as error:
        print(f"skipped: no private redis-server ({error})")
        return
    try:
        with tempfile.TemporaryDirectory(prefix="renature-flood-") as work:
            lines = measure(server.url, Path(work))
        print("\n".join(lines))
    finally:
        server.cleanup()


if __name__ == "__main__":
    run()
