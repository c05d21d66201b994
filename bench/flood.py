"""The gateway under a flood: do normal players keep their latency while others hammer it?

A private ``redis-server``, one rules service and one gateway (separate processes, the gateway
on a free port with its rate limits on, as in production). Normal players play 2-player games
(read whose turn it is, ask the legal actions, send one: three requests per move)
and every request's latency is kept; each game is played from an address of its own
(127.0.1.N), as players are, and the seat bucket is raised for these bots, which move far
faster than people (``RENATURE_LIMIT_SEAT``). The flood runs in another process from two other
loopback addresses (127.0.0.2 and .3: on Linux the whole 127/8 is local): anonymous audits and
explanations of a finished game, spectator views, game creations, and a seat token sending
refused commands in a loop. Printed: the normal players' p50/p99 alone, then beside the flood
with the limits on, then beside the flood with the limits off; and what the flood got.

``python -m bench --only flood``; ``python -m bench.flood --flood URL GAME SECONDS`` is the
flood process itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx

# tests/ is not a package: the private redis-server helper of the test suite is imported by path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from redis_server import RedisServer, free_port

WINDOW_S = 6.0
NORMAL_GAMES = 4
FLOOD_ADDRESSES = ["127.0.0.2", "127.0.0.3"]
FLOODERS_PER_ADDRESS = 16


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def services(redis_url: str, limits: bool, workdir: Path) -> Iterator[str]:
    """A rules service and a gateway; yields the gateway's URL."""
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "RENATURE_RATE_LIMITS": "on" if limits else "off",
        "RENATURE_LOG_LEVEL": "WARNING",
        "RENATURE_LIMIT_SEAT": "500/second",
    }
    env.pop("RENATURE_CONSUMER", None)
    started = []
    for name, extra in (("rules", []), ("gateway", ["--port", str(port)])):
        log = (workdir / f"{name}-{'on' if limits else 'off'}.log").open("wb")
        started.append(
            subprocess.Popen(
                [sys.executable, "-m", "renature_services.supervisor", name, *extra],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
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
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


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


async def play(url: str, latencies: list[float], until: float) -> str | None:
    """Play games until ``until``, each from a new address; the id of the last game
    finished, if any."""
    finished = None
    while time.monotonic() < until:
        client = Timed(url, next(_ADDRESSES))
        client.latencies = latencies
        try:
            finished = await play_one(client, until) or finished
        finally:
            await client.http.aclose()
    return finished


async def play_one(client: Timed, until: float) -> str | None:
    """One game, until its end or ``until``; its id if it ended."""
    game_id, tokens = await new_game(client)
    for number in range(5_000):
        summary = await client.request("GET", f"/games/{game_id}", headers=auth(tokens[0]))
        if summary.json()["phase"] in ("final_scoring", "finished"):
            return game_id
        token = tokens[summary.json()["current_seat"]]
        legal = await client.request("GET", f"/games/{game_id}/legal-actions", headers=auth(token))
        move = {"command_id": f"m{number}", "command": legal.json()[0]}
        await client.request("POST", f"/games/{game_id}/commands", json=move, headers=auth(token))
        if time.monotonic() >= until:
            break
    return None


async def normal_players(url: str, window_s: float) -> list[float]:
    latencies: list[float] = []
    until = time.monotonic() + window_s
    await asyncio.gather(*(play(url, latencies, until) for _ in range(NORMAL_GAMES)))
    return latencies


async def a_finished_game(url: str) -> str:
    finished = None
    while finished is None:
        finished = await play(url, [], time.monotonic() + 60)
    while (await httpx.AsyncClient(base_url=url).get(f"/games/{finished}")).json()[
        "phase"
    ] != "finished":
        await asyncio.sleep(0.05)
    return finished


# -- the flood (its own process) -------------------------------------------------------------


async def flood(url: str, finished: str, seconds: float) -> dict[str, object]:
    clients = [Timed(url, address) for address in FLOOD_ADDRESSES]
    until = time.monotonic() + seconds
    game_id, tokens = await new_game(clients[0])

    async def hammer(client: Timed, kind: int) -> None:
        number = 0
        while time.monotonic() < until:
            number += 1
            with contextlib.suppress(httpx.HTTPError):
                if kind == 0:
                    await client.request("GET", f"/games/{finished}/audit")
                elif kind == 1:
                    await client.request("GET", f"/games/{finished}/explanation")
                elif kind == 2:
                    await client.request("POST", "/games", json={"players": 4})
                elif kind == 3:
                    await client.request("GET", f"/games/{game_id}/spectator")
                else:  # the seat whose turn it is not: every EndTurn is refused
                    body = {"command_id": f"r{number}", "command": {"type": "EndTurn"}}
                    await client.request(
                        "POST", f"/games/{game_id}/commands", json=body, headers=auth(tokens[1])
                    )

    await asyncio.gather(
        *(
            hammer(client, (index + offset) % 5)
            for index, client in enumerate(clients)
            for offset in range(FLOODERS_PER_ADDRESS)
        )
    )
    statuses: Counter[int] = Counter()
    for client in clients:
        statuses.update(client.statuses)
        await client.http.aclose()
    return {"requests": sum(statuses.values()), "statuses": dict(statuses)}


def start_flood(url: str, finished: str, seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.flood", "--flood", url, finished, str(seconds)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


# -- the figures -----------------------------------------------------------------------------


def line(label: str, latencies: list[float]) -> str:
    ms = [x * 1000 for x in latencies]
    return (
        f"  {label:<38} p50 {percentile(ms, 0.5):6.1f} ms  p99 {percentile(ms, 0.99):7.1f} ms"
        f"  ({len(ms)} requests, {len(ms) / WINDOW_S:.0f}/s)"
    )


def flood_line(result: dict[str, object]) -> str:
    statuses = result["statuses"]
    assert isinstance(statuses, dict)
    total = max(1, int(str(result["requests"])))
    limited = statuses.get("429", 0)
    return (
        f"  {'':<38} the flood: {total / WINDOW_S:.0f} requests/s, "
        f"{100 * int(limited) / total:.0f}% answered 429"
    )


def measure(redis_url: str, limits: bool, workdir: Path, with_flood: list[bool]) -> list[str]:
    out = []
    with services(redis_url, limits, workdir) as url:
        finished = asyncio.run(a_finished_game(url))
        for flooding in with_flood:
            process = start_flood(url, finished, WINDOW_S) if flooding else None
            normal = asyncio.run(normal_players(url, WINDOW_S))
            limits_said = "limits on" if limits else "limits off"
            label = f"beside a flood, {limits_said}" if flooding else f"alone, {limits_said}"
            out.append(line(label, normal))
            if process is not None:
                stdout, _ = process.communicate(timeout=WINDOW_S + 60)
                out.append(flood_line(json.loads(stdout.decode().strip().splitlines()[-1])))
    return out


def run() -> None:
    print(
        f"\n== Gateway under a flood: {NORMAL_GAMES} normal 2-player games at a time, "
        f"{len(FLOOD_ADDRESSES) * FLOODERS_PER_ADDRESS} flooding clients from "
        f"{len(FLOOD_ADDRESSES)} others, {WINDOW_S:.0f} s each =="
    )
    try:
        server = RedisServer().start()
    except Exception as error:
        print(f"skipped: no private redis-server ({error})")
        return
    try:
        with tempfile.TemporaryDirectory(prefix="renature-flood-") as work:
            lines = measure(server.url, True, Path(work), [False, True])
            lines += measure(server.url, False, Path(work), [True])
        print("\n".join(lines))
    finally:
        server.cleanup()


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--flood":
    result = asyncio.run(flood(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    print(json.dumps(result))
elif __name__ == "__main__":
    run()
