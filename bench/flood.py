"""The gateway under a flood: do normal players keep their latency while others hammer it?

A private ``redis-server``, one rules service and one gateway (separate processes, the gateway
on a free port with its rate limits on, as in production). Normal players play 2-player games
(read whose turn it is, ask the legal actions, send one: three requests per move)
and every request's latency is kept; each game is played from an address of its own
(127.0.1.N), as players are, and the seat bucket is raised for these bots, which move far
faster than people (``RENATURE_LIMIT_SEAT``). The flood runs in another process from two other
loopback addresses (127.0.0.2 and .3: on Linux the whole 127/8 is local): anonymous audits and
explanations of a finished game, spectator views, game creations, and a seat token sending
refused commands in a loop. Printed: the normal players' p50/p99 alone (limits off and on:
what the limits cost), then beside the flood with the limits on and with them off (two
gateways, one with the limits and one without, on the same Redis and rules service; the four
take turns for a few rounds, so that a change of the machine's load falls on all of them
alike); and what the flood got.

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

from devkit.redis_server import RedisServer, free_port

WINDOW_S = 4.0
ROUNDS = 3
NORMAL_GAMES = 4
FLOOD_ADDRESSES = ["127.0.0.2", "127.0.0.3"]
FLOODERS_PER_ADDRESS = 16


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def services(redis_url: str, workdir: Path) -> Iterator[dict[bool, str]]:
    """A rules service and two gateways on one Redis, one with the rate limits on and one
    with them off; yields their URLs by ``limits``."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "RENATURE_LOG_LEVEL": "WARNING",
        "RENATURE_LIMIT_SEAT": "500/second",
    }
    env.pop("RENATURE_CONSUMER", None)
    ports = {True: free_port(), False: free_port()}
    commands: list[tuple[str, list[str], dict[str, str]]] = [("rules", [], env)]
    for limits, port in ports.items():
        switch = {"RENATURE_RATE_LIMITS": "on" if limits else "off"}
        commands.append(("gateway", ["--port", str(port)], {**env, **switch}))
    started = []
    for number, (name, extra, environment) in enumerate(commands):
        log = (workdir / f"{name}-{number}.log").open("wb")
        started.append(
            subprocess.Popen(
                [sys.executable, "-m", "gameserver.runtime.supervisor", name, *extra],
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    urls = {limits: f"http://127.0.0.1:{port}" for limits, port in ports.items()}
    try:
        deadline = time.monotonic() + 30
        for url in urls.values():
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                    raise RuntimeError(f"the gateway did not start (logs in {workdir})")
                time.sleep(0.1)
        yield urls
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
    # The game whose waiting seat sends refused commands is set up from an address of its
    # own (the flooding ones are over their creation quota after the first round).
    setup = Timed(url, f"127.0.2.{os.getpid() % 250 + 1}")
    game_id, tokens = await new_game(setup)
    await setup.http.aclose()

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
        stderr=None,  # a failing flood says why
    )


# -- the figures -----------------------------------------------------------------------------


SCENARIOS = (
    ("alone, limits off", False, False),
    ("alone, limits on", True, False),
    ("beside a flood, limits on", True, True),
    ("beside a flood, limits off", False, True),
)


def line(label: str, latencies: list[float]) -> str:
    ms = [x * 1000 for x in latencies]
    seconds = WINDOW_S * ROUNDS
    return (
        f"  {label:<30} p50 {percentile(ms, 0.5):6.1f} ms  p99 {percentile(ms, 0.99):7.1f} ms"
        f"  ({len(ms)} requests, {len(ms) / seconds:.0f}/s)"
    )


def flood_line(results: list[dict[str, object]]) -> str:
    total = sum(int(str(result["requests"])) for result in results)
    limited = 0
    for result in results:
        statuses = result["statuses"]
        assert isinstance(statuses, dict)
        limited += int(statuses.get("429", 0))
    return (
        f"  {'':<30} the flood: {total / (WINDOW_S * ROUNDS):.0f} requests/s, "
        f"{100 * limited / max(1, total):.0f}% answered 429"
    )


def measure(redis_url: str, workdir: Path) -> list[str]:
    """Every scenario for ``WINDOW_S`` per round, the scenarios taking turns for ``ROUNDS``
    rounds, so that a change of the machine's load falls on all of them alike."""
    latencies: dict[str, list[float]] = {label: [] for label, _, _ in SCENARIOS}
    floods: dict[str, list[dict[str, object]]] = {label: [] for label, _, _ in SCENARIOS}
    with services(redis_url, workdir) as urls:
        finished = {limits: asyncio.run(a_finished_game(url)) for limits, url in urls.items()}
        for _ in range(ROUNDS):
            for label, limits, flooding in SCENARIOS:
                url = urls[limits]
                process = start_flood(url, finished[limits], WINDOW_S) if flooding else None
                latencies[label] += asyncio.run(normal_players(url, WINDOW_S))
                if process is not None:
                    stdout, _ = process.communicate(timeout=WINDOW_S + 60)
                    floods[label].append(json.loads(stdout.decode().strip().splitlines()[-1]))
    out = []
    for label, _, flooding in SCENARIOS:
        out.append(line(label, latencies[label]))
        if flooding:
            out.append(flood_line(floods[label]))
    return out


def run() -> None:
    print(
        f"\n== Gateway under a flood: {NORMAL_GAMES} normal 2-player games at a time, "
        f"{len(FLOOD_ADDRESSES) * FLOODERS_PER_ADDRESS} flooding clients from "
        f"{len(FLOOD_ADDRESSES)} other addresses; {ROUNDS} rounds of {WINDOW_S:.0f} s each =="
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


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--flood":
    result = asyncio.run(flood(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    print(json.dumps(result))
elif __name__ == "__main__":
    run()
