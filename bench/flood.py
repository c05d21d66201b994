"""The gateway under a flood: do normal players keep their latency while others hammer it?

A private ``redis-server``, one rules service and one gateway (separate processes, the gateway
on a free port with its rate limits and front door on, as in production). Normal players play
2-player games (read whose turn it is, ask the legal actions, send one: three requests per
move) and every request's latency is kept; each game is created from an address of its own
(127.0.1.N), and the seat bucket is raised for these bots, which move far faster than people
(``RENATURE_LIMIT_SEAT``). Each flood (an attack of the network threat model, docs/security.md)
runs in another process beside them, one at a time, from other loopback addresses (on Linux
the whole 127/8 is local):

- ``proxy``: everyone behind one address (127.0.0.2, an ingress the gateway does not trust): the
  players' moves and reads go through it too, while the flood sends made-up tokens from it;
- ``bearers``: random ``Authorization: Bearer`` on the routes that ignore tokens (audit,
  explanation, spectator view, summary);
- ``disputes``: uploads of a 1 MB events file to ``POST /disputes``;
- ``half-open``: connections that send a head and never finish it, re-opened as they are closed;
- ``spectators``: live WebSockets to a game opened and held from many addresses.

Printed for each: the normal players' p50/p99 beside it, their p99 against the same players
alone (target: within 3x), and what the flood got. The scenarios take turns for a few rounds, so
that a change of the machine's load falls on all of them alike.

``python -m bench --only flood``; ``python -m bench.flood --flood URL GAME SECONDS PATTERN`` is
the flood process itself.
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
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from bench.processes import serve, stop_processes
from devkit.redis_server import RedisServer, free_port

WINDOW_S = 4.0
ROUNDS = 2
NORMAL_GAMES = 4
SHARED = "127.0.0.2"
FLOOD_ADDRESSES = [f"127.0.3.{n}" for n in range(1, 9)]
FLOODERS = 24
HALF_OPEN = 400
SPECTATORS = 300
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
        deadline = time.monotonic() + 30
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


async def play(url: str, latencies: list[float], until: float, via: str | None) -> str | None:
    """Play games until ``until``, each created from a new address and played from it (or
    from ``via``, a shared address); the id of the last game finished, if any."""
    finished = None
    while time.monotonic() < until:
        setup = Timed(url, next(_ADDRESSES))
        client = Timed(url, via) if via else setup
        client.latencies = latencies
        try:
            finished = await play_one(setup, client, until) or finished
        finally:
            await setup.http.aclose()
            await client.http.aclose()
    return finished


async def play_one(setup: Timed, client: Timed, until: float) -> str | None:
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
        if time.monotonic() >= until:
            break
    return None


async def normal_players(url: str, window_s: float, via: str | None) -> list[float]:
    latencies: list[float] = []
    until = time.monotonic() + window_s
    await asyncio.gather(*(play(url, latencies, until, via) for _ in range(NORMAL_GAMES)))
    return latencies


async def a_finished_game(url: str) -> str:
    finished = None
    while finished is None:
        finished = await play(url, [], time.monotonic() + 60, None)
    async with httpx.AsyncClient(base_url=url) as http:
        while (await http.get(f"/games/{finished}")).json()["phase"] != "finished":
            await asyncio.sleep(0.05)
    return finished


# -- the floods (their own process) ----------------------------------------------------------


async def flood(url: str, finished: str, seconds: float, pattern: str) -> dict[str, object]:
    until = time.monotonic() + seconds
    statuses: Counter[str] = Counter()
    if pattern == "half-open":
        await half_open(url, until, statuses)
    elif pattern == "spectators":
        await spectators(url, finished, until, statuses)
    else:
        await requests(url, finished, until, pattern, statuses)
    return {"requests": sum(statuses.values()), "statuses": dict(statuses)}


async def requests(
    url: str, finished: str, until: float, pattern: str, statuses: Counter[str]
) -> None:
    """HTTP floods: made-up tokens from the shared address, random bearers on free routes,
    or uploads to /disputes."""
    addresses = [SHARED] if pattern == "proxy" else FLOOD_ADDRESSES
    clients = [Timed(url, address) for address in addresses]
    upload = b""
    if pattern == "disputes":
        async with httpx.AsyncClient(base_url=url) as http:
            events = (await http.get(f"/games/{finished}/events")).json()
        lines = [json.dumps({**event, "pad": "p" * 3_000}) for event in events]
        upload = "\n".join(lines).encode()[: 1024 * 1024]

    async def hammer(client: Timed, number: int) -> None:
        paths = [f"/games/{finished}/{p}" for p in ("audit", "explanation", "spectator", "")]
        while time.monotonic() < until:
            number += 1
            with contextlib.suppress(httpx.HTTPError):
                bearer = auth(uuid.uuid4().hex)
                if pattern == "disputes":
                    answer = await client.request("POST", "/disputes", content=upload)
                else:
                    path = f"/games/{finished}/view" if pattern == "proxy" else paths[number % 4]
                    answer = await client.request("GET", path.rstrip("/"), headers=bearer)
                if answer.status_code == 429:  # a client that waits out what it is told
                    await asyncio.sleep(min(1.0, float(answer.headers.get("Retry-After", 1))))

    await asyncio.gather(
        *(hammer(clients[n % len(clients)], n) for n in range(FLOODERS)), return_exceptions=True
    )
    for client in clients:
        statuses.update(str(status) for status in client.statuses.elements())
        await client.http.aclose()


async def half_open(url: str, until: float, statuses: Counter[str]) -> None:
    """Connections that send a head and never end it, re-opened as the gateway closes them."""
    host, port = url.removeprefix("http://").split(":")

    async def hold(number: int) -> None:
        address = FLOOD_ADDRESSES[number % 4]  # 100 per address: past the gateway's 64
        while time.monotonic() < until:
            try:
                reader, writer = await asyncio.open_connection(
                    host, int(port), local_addr=(address, 0)
                )
            except OSError:
                statuses["refused"] += 1
                await asyncio.sleep(0.2)
                continue
            writer.write(b"GET /games HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
            try:
                answer = await asyncio.wait_for(reader.read(64), max(0.1, until - time.monotonic()))
                statuses[answer[9:12].decode() or "closed"] += 1
            except TimeoutError:
                statuses["held"] += 1
            except OSError:
                statuses["reset"] += 1
            writer.close()

    await asyncio.gather(*(hold(n) for n in range(HALF_OPEN)), return_exceptions=True)


async def spectators(url: str, game: str, until: float, statuses: Counter[str]) -> None:
    """Live WebSockets to one game, opened and held from many addresses."""
    ws_url = url.replace("http://", "ws://") + f"/games/{game}/live"

    async def watch(number: int) -> None:
        address = f"127.0.4.{1 + number % 200}"
        while time.monotonic() < until:
            try:
                async with connect(ws_url, local_addr=(address, 0), open_timeout=5) as ws:
                    statuses["opened"] += 1
                    with contextlib.suppress(Exception):
                        while time.monotonic() < until:
                            await asyncio.wait_for(ws.recv(), max(0.1, until - time.monotonic()))
                    if ws.close_code == 4429:
                        statuses["4429"] += 1
                        await asyncio.sleep(0.5)
            except Exception:
                statuses["failed"] += 1
                await asyncio.sleep(0.2)

    await asyncio.gather(*(watch(n) for n in range(SPECTATORS)), return_exceptions=True)


def start_flood(url: str, finished: str, seconds: float, pattern: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.flood", "--flood", url, finished, str(seconds), pattern],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=None,  # a failing flood says why
    )


# -- the figures -----------------------------------------------------------------------------


def line(label: str, latencies: list[float], alone_p99: float | None) -> str:
    ms = [x * 1000 for x in latencies]
    p99 = percentile(ms, 0.99)
    versus = ""
    if alone_p99:
        ratio = p99 / alone_p99
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        versus = f"  {ratio:4.1f}x alone ({verdict} {TARGET_RATIO:.0f}x)"
    return (
        f"  {label:<12} p50 {percentile(ms, 0.5):6.1f} ms  p99 {p99:7.1f} ms"
        f"  ({len(ms) / (WINDOW_S * ROUNDS):.0f} requests/s){versus}"
    )


def flood_line(results: list[dict[str, object]]) -> str:
    statuses: Counter[str] = Counter()
    for result in results:
        found = result["statuses"]
        assert isinstance(found, dict)
        statuses.update({str(k): int(v) for k, v in found.items()})
    total = sum(statuses.values())
    shown = ", ".join(f"{k}: {v}" for k, v in statuses.most_common(4))
    return f"  {'':<12} the flood: {total / (WINDOW_S * ROUNDS):.0f}/s ({shown})"


def measure(redis_url: str, workdir: Path) -> list[str]:
    """Every scenario for ``WINDOW_S`` per round, taking turns for ``ROUNDS`` rounds."""
    scenarios = ("alone", *PATTERNS)
    latencies: dict[str, list[float]] = {label: [] for label in scenarios}
    floods: dict[str, list[dict[str, object]]] = {label: [] for label in scenarios}
    with services(redis_url, workdir) as url:
        finished = asyncio.run(a_finished_game(url))
        for _ in range(ROUNDS):
            for label in scenarios:
                flooding = label != "alone"
                process = start_flood(url, finished, WINDOW_S, label) if flooding else None
                via = SHARED if label == "proxy" else None
                latencies[label] += asyncio.run(normal_players(url, WINDOW_S, via))
                if process is not None:
                    stdout, _ = process.communicate(timeout=WINDOW_S + 60)
                    floods[label].append(json.loads(stdout.decode().strip().splitlines()[-1]))
    alone = percentile([x * 1000 for x in latencies["alone"]], 0.99)
    out = [line("alone", latencies["alone"], None)]
    for label in PATTERNS:
        out.append(line(label, latencies[label], alone))
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


if __name__ == "__main__" and len(sys.argv) == 6 and sys.argv[1] == "--flood":
    result = asyncio.run(flood(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]))
    print(json.dumps(result))
elif __name__ == "__main__":
    run()
