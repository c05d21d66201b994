"""End to end: every service in its own process, games played through the gateway over HTTP.

Checks what only the whole stack can show: bots through the API reproduce the in-process
games, read models equal a fresh replay (also after a projector is SIGKILLed mid-game), a
duplicated command id appends nothing, two rules services racing on one game never fork it,
and no view or live message shows a seat another seat's hand or token backs. Valley games on
both sides of the board (2 and 4 players) do the same, show their mushrooms and merged areas
in the board read model, and pass ``renature audit``.

The stack: a private Redis, two rules services, the board and score projectors and the gateway,
each its own process started with ``python -m gameserver.runtime.supervisor <service>`` (what
``renature serve <service>`` runs) or, where that module is missing, the services' own entry
points. Each process logs to its own file; the tails are printed when a test fails. The stack
is shared by the tests of this module (starting it costs a few seconds).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
from redis import Redis
from websockets.asyncio.client import connect

from devkit.redis_server import RedisServer, free_port
from devkit.requirements import require_redis_server
from devkit.waiting import eventually
from eventstore import KeyLayout
from gameplatform import get_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.runtime import bus
from renature import events as e
from renature.board import PATH
from renature.game import outcome, play, replay
from renature.perspective import HIDDEN
from renature.rules import legal_actions
from renature.state import GameState
from support.hosting import state_as

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

# The stack fixture lives here rather than in a conftest.py: without __init__.py files every
# conftest is imported as the module ``conftest``, and a second one would shadow tests/conftest.py
# for tests that ``import conftest``.

STARTUP_TIMEOUT = 30.0


def service_command(name: str, port: int) -> list[str]:
    """How to start one service as its own process."""
    if importlib.util.find_spec("gameserver.runtime.supervisor") is not None:
        command = [sys.executable, "-m", "gameserver.runtime.supervisor", name]
        return command + (["--port", str(port)] if name == "gateway" else [])
    if name == "gateway":
        return [sys.executable, "-m", "gameserver.gateway", "--port", str(port)]
    if name == "rules":
        code = (
            "from gameserver.rules.rules_service import run;"
            "from gameserver.runtime.settings import Settings;"
            "run(Settings.from_env())"
        )
    else:
        code = (
            "from gameserver.projectors import PROJECTIONS, projector_runner;"
            "from gameserver.runtime.settings import Settings;"
            f"projector_runner.run(Settings.from_env(), PROJECTIONS[{name!r}]())"
        )
    return [sys.executable, "-c", code]


@dataclass
class Service:
    """One service process: started, killed and restarted by the tests."""

    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> Service:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, nothing is cleaned up or acknowledged."""
        if self.process is not None and self.alive:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not go."""
        if self.process is None or not self.alive:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return f"--- {self.name} ---\n" + "\n".join(text)


@dataclass
class E2EStack:
    redis: RedisServer
    gateway_url: str
    services: dict[str, Service] = field(default_factory=dict)

    def client(self) -> Redis:
        return redis.Redis.from_url(self.redis.url)

    def log_paths(self) -> list[Path]:
        return [service.log_path for service in self.services.values()]

    def logs(self) -> str:
        return "\n".join(service.tail() for service in self.services.values())

    def assert_all_alive(self) -> None:
        dead = [name for name, service in self.services.items() if not service.alive]
        assert not dead, f"{dead} died\n{self.logs()}"

    def wait_projector_ready(self, name: str, timeout: float = STARTUP_TIMEOUT) -> None:
        """Ready once its consumer group exists on the last partition feed (set-up done)."""
        group = {"board": bus.BOARD_GROUP, "score": bus.SCORE_GROUP}[name]
        deadline = time.monotonic() + timeout
        with self.client() as client:
            while time.monotonic() < deadline:
                if not self.services[name].alive:
                    raise RuntimeError(f"{name} died\n{self.logs()}")
                try:
                    groups = client.xinfo_groups("rn:{p15}:feed")
                    if any(_text(g["name"]) == group for g in groups):
                        return
                except redis.ResponseError:
                    pass
                time.sleep(0.1)
        raise RuntimeError(f"{name} did not get ready\n{self.logs()}")

    def wait_gateway_and_rules(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Ready once the gateway answers and a game can be created (rules service up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                response = httpx.post(f"{self.gateway_url}/games", json={"players": 2}, timeout=5)
                if response.status_code == 201:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the gateway or the rules service did not get ready\n{self.logs()}")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@pytest.fixture(scope="module")
def e2e_stack(request: pytest.FixtureRequest) -> Iterator[E2EStack]:
    require_redis_server()
    logs = Path(tempfile.mkdtemp(prefix="renature-e2e-"))
    with RedisServer() as server:
        port = free_port()
        env = {
            **os.environ,
            "RENATURE_ALLOW_CHOSEN_SEEDS": "1",  # the bots deal like `renature simulate`
            "REDIS_URL": server.url,
            "RENATURE_LOG_LEVEL": "INFO",
            "RENATURE_ACCESS_LOG": "on",  # every request's line and every socket's: no secret
            "RENATURE_RECLAIM_IDLE_MS": "1000",
            # Bots and Schemathesis send far faster than people from one address; the rate
            # limits have their own tests (tests/integration/test_limits.py).
            "RENATURE_RATE_LIMITS": "off",
        }
        env.pop("RENATURE_CONSUMER", None)
        stack = E2EStack(redis=server, gateway_url=f"http://127.0.0.1:{port}")
        names = {"rules-a": "rules", "rules-b": "rules", "board": "board", "score": "score"}
        names["gateway"] = "gateway"
        for key, name in names.items():
            stack.services[key] = Service(
                key, service_command(name, port), env, logs / f"{key}.log"
            ).start()
        try:
            stack.wait_gateway_and_rules()
            stack.wait_projector_ready("board")
            stack.wait_projector_ready("score")
            failed = request.session.testsfailed
            yield stack
            if request.session.testsfailed > failed:
                sys.stdout.write(f"service logs ({logs}):\n{stack.logs()}\n")
        finally:
            for service in stack.services.values():
                service.stop()


LAYOUT = KeyLayout()
GAMES = [(2, ["greedy", "random"]), (3, ["random", "greedy", "random"]), (4, ["greedy"] * 4)]


def stream_events(stack: E2EStack, game_id: str, name: str = "renature") -> list[Any]:
    with stack.client() as client:
        entries = client.xrange(LAYOUT.game_key(game_id))
    versions = [int(entry_id.decode().partition("-")[2]) for entry_id, _ in entries]
    assert versions == list(range(1, len(entries) + 1)), "the stream has a gap or a fork"
    return [get_game(name).decode_event(fields[b"event"]) for _, fields in entries]


def read_model(stack: E2EStack, name: str, game_id: str) -> tuple[int, Any] | None:
    key = f"{LAYOUT.base(LAYOUT.partition_of(game_id))}:{name}:{game_id}"
    with stack.client() as client:
        version, model = client.hmget(key, ["version", "model"])
    return None if version is None else (int(version), json.loads(model))


def wait_for_models(stack: E2EStack, game_id: str, version: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        models = [read_model(stack, name, game_id) for name in ("board", "score")]
        if all(m is not None and m[0] == version for m in models):
            return
        time.sleep(0.1)
    raise AssertionError(f"read models of {game_id} did not reach version {version}: {models}")


def assert_models_equal_fresh_replay(stack: E2EStack, game_id: str, name: str = "renature") -> None:
    """The projected board and score equal what a fresh fold of the stream gives."""
    from gameserver.projectors import ScoreProjection

    game = get_game(name)
    events = stream_events(stack, game_id, name)
    wait_for_models(stack, game_id, len(events))
    state = game.replay(events)
    assert state is not None
    board = read_model(stack, "board", game_id)
    assert board is not None
    assert board[1] == json.loads(msgspec.json.encode(game.view(state, None)))
    projection = ScoreProjection()
    fold = None
    for event in events:
        fold = projection.apply(game, fold, event)
    assert fold is not None
    score = read_model(stack, "score", game_id)
    assert score is not None
    assert score[1] == json.loads(projection.render(game, fold))


def assert_live_message_is_safe(message: dict[str, Any], viewer: int | None) -> None:
    """Nothing of another seat's hand, of the deal, or of a token someone else holds."""
    kind = message["type"]
    if kind == "GameCreated":
        assert message["deal"] is None
    if kind in ("DominoDrawn", "DominoDiscarded") and message["seat"] != viewer:
        assert message["domino"] is None, (viewer, message)
    if kind == "AreaScored" and (message.get("final") or message["seat"] != viewer):
        assert message["token"] is None, (viewer, message)


async def watch(url: str) -> list[dict[str, Any]]:
    """Every live message until the game ends (the gateway closes the channel then)."""
    messages = []
    async with connect(url) as ws:
        async for raw in ws:
            messages.append(json.loads(raw))
    return messages


@pytest.mark.parametrize(("players", "bots"), GAMES)
async def test_bots_through_the_stack_equal_in_process_play(
    e2e_stack: E2EStack, players: int, bots: list[str]
) -> None:
    seed = f"e2e-{players}"
    live = f"{e2e_stack.gateway_url.replace('http', 'ws')}/games"
    async with GatewayClient(e2e_stack.gateway_url) as client:
        game_id = await client.create_game(players, seed=seed)
        watchers = [asyncio.create_task(watch(f"{live}/{game_id}/live"))]
        tokens = [await client.join(game_id, seat, name) for seat, name in enumerate(bots)]
        watchers += [
            asyncio.create_task(watch(f"{live}/{game_id}/live?token={token}")) for token in tokens
        ]
        result = await asyncio.wait_for(_play_joined(client, game_id, tokens, seed, bots), 120)
        messages = await asyncio.wait_for(asyncio.gather(*watchers), 30)
        for seat, token in enumerate(tokens):
            seat_view = await client.view(game_id, token)
            assert all(s.hand is None for s in seat_view.seats if s.seat != seat)
    log, state = play(players, seed, bots)
    expected = outcome(state, bots, len(log))
    assert (result.scores, result.ranking, result.winners) == (
        expected.scores,
        expected.ranking,
        expected.winners,
    )
    assert result.events == expected.events
    for viewer, received in zip([None, *range(players)], messages, strict=True):
        assert [m["version"] for m in received] == list(range(1, result.events + 1))
        for message in received:
            assert_live_message_is_safe(message, viewer)
    # The live channel took each seat's token in its query string; no log line shows one.
    logs = "".join(path.read_text(errors="replace") for path in e2e_stack.log_paths())
    assert "live?token=[redacted]" in logs
    assert not [token for token in tokens if token in logs]
    assert_models_equal_fresh_replay(e2e_stack, game_id)


async def _play_joined(
    client: GatewayClient, game_id: str, tokens: list[str], seed: str, bots: list[str]
) -> Any:
    """`play_game` after the seats were taken (so watchers could connect first)."""
    from renature.bots import make_bot
    from renature.game import bot_seed

    await client.start(game_id, tokens[0])
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    number = 0
    while True:
        summary = await client.summary(game_id)
        if summary["phase"] in ("final_scoring", "finished"):
            break
        seat = summary["current_seat"]
        state = await state_as(client, game_id, tokens[seat], GameState)
        assert all(set(s.hand) <= {HIDDEN} for n, s in enumerate(state.seats) if n != seat)
        await client.send(game_id, tokens[seat], agents[seat].choose(state, seat), f"b{number}")
        number += 1
    final = await state_as(client, game_id, tokens[0], GameState)
    assert final.phase == "finished"
    return outcome(final, bots, final.version)


def test_bots_play_command_prints_the_simulated_outcome(e2e_stack: E2EStack) -> None:
    command = [str(Path(sys.executable).parent / "renature"), "bots", "play"]
    command += ["--gateway", e2e_stack.gateway_url, "--players", "2", "--seed", "cli"]
    command += ["--bots", "greedy,random"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    log, state = play(2, "cli", ["greedy", "random"])
    expected = outcome(state, ["greedy", "random"], len(log))
    assert printed["scores"] == expected.scores
    assert printed["winners"] == expected.winners
    assert printed["ranking"] == expected.ranking


async def test_projector_killed_mid_game_catches_up_without_double_counting(
    e2e_stack: E2EStack,
) -> None:
    bots = ["greedy", "random", "greedy"]
    async with GatewayClient(e2e_stack.gateway_url) as client:
        game_id = await client.create_game(3, seed="crash")
        tokens = [await client.join(game_id, seat, name) for seat, name in enumerate(bots)]
        game = asyncio.create_task(_play_joined(client, game_id, tokens, "crash", bots))
        with e2e_stack.client() as redis:
            await eventually(
                lambda: game.done() or redis.xlen(LAYOUT.game_key(game_id)) >= 60,
                "60 events stored or the game over",
                timeout=60,
            )
        assert not game.done(), "the game ended before the projectors could be killed"
        for name in ("board", "score"):
            e2e_stack.services[name].kill()
        with e2e_stack.client() as redis:  # moves keep coming while the projectors are down
            down_at = redis.xlen(LAYOUT.game_key(game_id))
            await eventually(
                lambda: game.done() or redis.xlen(LAYOUT.game_key(game_id)) >= down_at + 10,
                "10 more events stored while the projectors are down",
                timeout=30,
            )
        for name in ("board", "score"):
            e2e_stack.services[name].start()
        result = await asyncio.wait_for(game, 120)
    for name in ("board", "score"):
        e2e_stack.wait_projector_ready(name)
    assert_models_equal_fresh_replay(e2e_stack, game_id)
    score = read_model(e2e_stack, "score", game_id)
    assert score is not None
    assert [s["score"] for s in score[1]["seats"]] == result.scores


async def test_duplicate_command_id_appends_nothing(e2e_stack: E2EStack) -> None:
    async with GatewayClient(e2e_stack.gateway_url) as client:
        game_id = await client.create_game(2, seed="dup")
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
        await client.start(game_id, tokens[0])
        state = await state_as(client, game_id, tokens[0], GameState)
        command = legal_actions(state, 0)[0]
        first = await client.send(game_id, tokens[0], command, "same-id")
        version = len(stream_events(e2e_stack, game_id))
        again = await client.send(game_id, tokens[0], command, "same-id")
    assert again == first
    assert len(stream_events(e2e_stack, game_id)) == version == first.version


async def test_two_rules_services_racing_on_one_game_never_fork_it(e2e_stack: E2EStack) -> None:
    assert e2e_stack.services["rules-a"].alive
    assert e2e_stack.services["rules-b"].alive
    async with GatewayClient(e2e_stack.gateway_url) as client:
        game_id = await client.create_game(2, seed="race")
        tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(2)]
        await client.start(game_id, tokens[0])
        for _ in range(5):  # several rounds of the same move sent many times at once
            summary = await client.summary(game_id)
            seat = summary["current_seat"]
            state = await state_as(client, game_id, tokens[seat], GameState)
            command = legal_actions(state, seat)[0]
            before = len(stream_events(e2e_stack, game_id))
            body = {"command": msgspec.to_builtins(command)}
            async with httpx.AsyncClient(base_url=e2e_stack.gateway_url, timeout=30) as http:
                responses = await asyncio.gather(
                    *(
                        http.post(
                            f"/games/{game_id}/commands",
                            json={**body, "command_id": f"race-{before}-{i}"},
                            headers={"Authorization": f"Bearer {tokens[seat]}"},
                        )
                        for i in range(8)
                    )
                )
            accepted = [r.json() for r in responses if r.status_code == 200]
            refused = [r for r in responses if r.status_code != 200]
            assert len(accepted) == 1, [r.text for r in responses]
            assert all(r.status_code == 409 for r in refused), [r.text for r in refused]
            events = stream_events(e2e_stack, game_id)  # contiguous versions, no fork
            assert len(events) == accepted[0]["version"]
            assert replay(events) is not None


async def test_a_game_through_the_stack_passes_the_dispute_audit(
    e2e_stack: E2EStack, tmp_path: Path
) -> None:
    """``renature audit`` from Redis, ``export`` then ``audit --events``, and the gateway's
    audit of the finished game all hold for a game the running services decided."""
    from gameserver.cli.bot_commands import play_game

    async with GatewayClient(e2e_stack.gateway_url) as client:
        result = await play_game(client, 3, "e2e-audit", ["greedy", "random", "greedy"])
    async with httpx.AsyncClient(base_url=e2e_stack.gateway_url, timeout=30) as http:
        over_http = await http.get(f"/games/{result.game_id}/audit")
    renature = str(Path(sys.executable).parent / "renature")
    url = ["--redis-url", e2e_stack.redis.url]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [renature, *args], capture_output=True, text=True, timeout=60, check=False
        )

    audited = await asyncio.to_thread(run, "audit", result.game_id, *url, "--json")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    report = json.loads(audited.stdout)
    assert report["ok"] is True
    assert report["finished"] is True
    assert report["scores"] == result.scores
    assert report["events"] == len(stream_events(e2e_stack, result.game_id))

    exported = tmp_path / "game.jsonl"
    done = await asyncio.to_thread(run, "export", result.game_id, *url, "--out", str(exported))
    assert done.returncode == 0, done.stderr
    assert [e.decode(line) for line in exported.read_bytes().splitlines()] == stream_events(
        e2e_stack, result.game_id
    )
    again = await asyncio.to_thread(run, "audit", "--events", str(exported), "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout) == report

    assert over_http.status_code == 200, over_http.text
    assert over_http.json() == report


# -- Valley through the stack --------------------------------------------------------------------

VALLEY_GAMES = [
    ("valley", 2, ("greedy", "random")),
    ("valley", 4, ("random", "greedy", "greedy", "random")),
    ("valley-back", 2, ("random", "greedy")),
    ("valley-back", 4, ("greedy", "random", "random", "greedy")),
]
"""Every Valley game has a greedy seat: the greedy bot always takes its mushrooms."""


@dataclass(frozen=True)
class Ran:
    """A ``renature`` command that ran: its exit status and what it printed."""

    status: int
    stdout: str
    stderr: str = ""

    @property
    def printed(self) -> Any:
        """The JSON on the last line of its output."""
        return json.loads(self.stdout.strip().splitlines()[-1])

    def __str__(self) -> str:
        return f"exit status {self.status}\n{self.stdout}\n{self.stderr}"


def renature_process(*args: str, timeout: float = 120) -> Ran:
    """``renature ...`` as its own process (as a person or a bot host runs it)."""
    command = [str(Path(sys.executable).parent / "renature"), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    return Ran(done.returncode, done.stdout, done.stderr)


def renature_here(*args: str) -> Ran:
    """``renature ...`` in this process: the same command, without the CLI's start-up time."""
    from typer.testing import CliRunner

    from gameserver.cli import app

    result = CliRunner().invoke(app, list(args))
    error = result.exception
    crash = "" if error is None or isinstance(error, SystemExit) else f"\n{error!r}"
    return Ran(result.exit_code, result.stdout, result.stderr + crash)


@dataclass
class ValleyGame:
    """One Valley game as the CLI saw it: played through the gateway, simulated in process and
    audited from Redis (``audited`` is None when the game could not be played)."""

    played: Ran
    simulated: Ran
    audited: Ran | None


@pytest.fixture(scope="module")
def valley_games(e2e_stack: E2EStack) -> dict[tuple[str, int], ValleyGame]:
    """Every game of `VALLEY_GAMES` played at once, each by a ``renature bots play`` process
    through the gateway; meanwhile ``renature simulate --json`` of each, and once they are
    over ``renature audit --redis-url`` of each. Simulate and audit run in this process: the
    CLI's start-up costs more than either, and the audit reads Redis all the same."""
    with ThreadPoolExecutor(max_workers=len(VALLEY_GAMES)) as pool:
        played, simulated = {}, {}
        for board, players, bots in VALLEY_GAMES:
            game = ["--board", board, "--players", str(players), "--seed", f"e2e-{board}-{players}"]
            game += ["--bots", ",".join(bots)]
            gateway = ["--gateway", e2e_stack.gateway_url]
            played[board, players] = pool.submit(renature_process, "bots", "play", *gateway, *game)
            simulated[board, players] = renature_here("simulate", *game, "--json")
        games = {}
        for key, future in played.items():
            done = future.result()
            audited = None
            if done.status == 0:
                redis_url = ["--redis-url", e2e_stack.redis.url]
                audited = renature_here("audit", done.printed["game_id"], *redis_url, "--json")
            games[key] = ValleyGame(done, simulated[key], audited)
        return games


@pytest.mark.parametrize(("board", "players", "bots"), VALLEY_GAMES)
async def test_valley_bot_games_through_the_stack(
    e2e_stack: E2EStack,
    valley_games: dict[tuple[str, int], ValleyGame],
    board: str,
    players: int,
    bots: tuple[str, ...],
) -> None:
    """A whole Valley game played by bots through the gateway: the outcome is ``renature
    simulate``'s, the read models are a fresh replay of the stream and show every mushroom and
    merged area, and ``renature audit`` of the stored stream holds."""
    game = valley_games[board, players]
    assert game.played.status == 0, str(game.played)
    assert game.simulated.status == 0, str(game.simulated)
    result, expected = game.played.printed, game.simulated.printed
    assert (result["board"], result["bots"]) == (board, list(bots))
    for key in ("board", "players", "bots", "scores", "ranking", "winners", "colours", "events"):
        assert result[key] == expected[key], key
    game_id = result["game_id"]

    events = stream_events(e2e_stack, game_id)
    assert len(events) == result["events"]
    assert_models_equal_fresh_replay(e2e_stack, game_id)
    state = replay(events)
    assert state is not None
    assert (state.board_id, state.phase) == (board, "finished")

    # Mushrooms: where the events put them is where the replayed state has them (the only
    # meadow spaces that belong to an area) and what the board read model shows.
    placed = [event for event in events if isinstance(event, e.MushroomPlaced)]
    assert placed, "no mushroom was placed: the game does not exercise Valley"
    layout = state.board
    merged_area = {
        layout.xy(cell): layout.area_ids[area]
        for cell, area in enumerate(state.area_of)
        if area >= 0 and layout.kinds[cell] == PATH
    }
    assert sorted((m.x, m.y) for m in placed) == sorted(merged_area)
    model = read_model(e2e_stack, "board", game_id)
    assert model is not None
    board_model = model[1]
    assert {(m["x"], m["y"]): m["area"] for m in board_model["mushrooms"]} == merged_area
    gained = sum(isinstance(event, e.MushroomGained) for event in events)
    declined = sum(isinstance(event, e.MushroomDeclined) for event in events)
    lost = sum(isinstance(event, e.MushroomLost) for event in events)
    assert gained == len(placed) + declined + lost
    assert board_model["mushrooms_left"] == state.mushrooms_left == 8 - len(placed) - lost

    # Merged areas: an area a mushroom joined into another is gone from the model, and every
    # area shown has its merged size (the board's spaces plus one per mushroom).
    merged_away = {area for m in placed for area in m.joined if area != m.area}
    shown = {area["id"]: area["size"] for area in board_model["areas"]}
    assert not merged_away & set(shown)
    assert set(shown) == set(layout.area_ids) - merged_away
    assert shown == {
        area_id: size
        for area_id, size in zip(layout.area_ids, state.area_sizes, strict=True)
        if size > 0
    }
    assert sum(shown.values()) == sum(layout.area_sizes) + len(placed)

    # The score model adds up to the final scores (end-only area scoring included), and the
    # gateway serves both read models as projected.
    score = read_model(e2e_stack, "score", game_id)
    assert score is not None
    assert [seat["score"] for seat in score[1]["seats"]] == expected["scores"]
    assert any(seat["breakdown"].get("final_areas") for seat in score[1]["seats"])
    assert not any(seat["breakdown"].get("areas") for seat in score[1]["seats"])
    async with httpx.AsyncClient(base_url=e2e_stack.gateway_url, timeout=30) as http:
        served = {name: await http.get(f"/games/{game_id}/{name}") for name in ("board", "scores")}
    assert served["board"].status_code == 200, served["board"].text
    assert served["board"].json() == board_model
    assert served["scores"].status_code == 200, served["scores"].text
    assert served["scores"].json() == score[1]

    # The dispute audit of the stored stream holds (exit status 0) and agrees on the scores.
    assert game.audited is not None
    assert game.audited.status == 0, str(game.audited)
    report = game.audited.printed
    assert (report["ok"], report["finished"]) == (True, True)
    assert report["scores"] == expected["scores"]
    assert report["events"] == len(events)


RENAISSANCE_GAMES = [("e2e-ren-1", ("greedy", "random")), ("e2e-ren-2", ("random", "greedy"))]


def without_provenance(event: Any) -> Any:
    """An event less what differs between two runs of one game: the game id (the gateway's is
    random), the command's id and time, and the hash chain (which covers both)."""
    return msgspec.structs.replace(event, game_id="", cause=None, prev_hash="", hash="")


@pytest.mark.parametrize(("seed", "bots"), RENAISSANCE_GAMES)
async def test_renaissance_bot_games_run_beside_renature_on_one_stack(
    e2e_stack: E2EStack, seed: str, bots: tuple[str, str]
) -> None:
    """Both games on one stack (one rules service, one set of projectors, one gateway): a
    Renaissance game played by ``renature bots play --game renaissance`` through the gateway,
    while a Renature game is played beside it, is ``renature simulate --game renaissance``'s
    game event for event; its read models are a fresh replay of its stream with Renaissance's
    rules; ``renature audit`` finds each game's game in the stored stream and holds for both;
    the live channel, the summary and the lobby know it as a Renaissance game."""
    gateway = ["--gateway", e2e_stack.gateway_url, "--seed", seed, "--bots", ",".join(bots)]
    live = f"{e2e_stack.gateway_url.replace('http', 'ws')}/games"
    with ThreadPoolExecutor(max_workers=2) as pool:
        renature = pool.submit(renature_process, "bots", "play", *gateway, "--players", "2")
        played = renature_process("bots", "play", "--game", "renaissance", *gateway)
        beside = renature.result()
    assert played.status == 0, str(played)
    assert beside.status == 0, str(beside)
    simulated = renature_here(
        "simulate", "--game", "renaissance", "--seed", seed, "--bots", ",".join(bots), "--json"
    )
    result, expected = played.printed, simulated.printed
    for key in ("game", "bots", "scores", "ranking", "winners", "colours", "events", "sets"):
        assert result[key] == expected[key], key
    game_id = result["game_id"]

    renaissance = get_game("renaissance")
    stored = stream_events(e2e_stack, game_id, "renaissance")
    in_process, _, _ = renaissance.simulate(seed, list(bots))
    assert [without_provenance(x) for x in stored] == [without_provenance(x) for x in in_process]
    assert_models_equal_fresh_replay(e2e_stack, game_id, "renaissance")
    assert_models_equal_fresh_replay(e2e_stack, beside.printed["game_id"])

    redis_url = ["--redis-url", e2e_stack.redis.url, "--json"]
    for audited_id, scores in ((game_id, result["scores"]), (beside.printed["game_id"], None)):
        audited = await asyncio.to_thread(renature_here, "audit", audited_id, *redis_url)
        assert audited.status == 0, str(audited)
        report = audited.printed
        assert (report["ok"], report["finished"], report["game_id"]) == (True, True, audited_id)
        assert scores is None or report["scores"] == scores

    async with httpx.AsyncClient(base_url=e2e_stack.gateway_url) as http:
        summary = (await http.get(f"/games/{game_id}")).json()
        listed = (await http.get("/games", params={"game": "renaissance", "limit": 100})).json()
    assert (summary["game"], summary["phase"], summary["board"]) == (
        "renaissance",
        "finished",
        "standard",
    )
    assert game_id in [listed_game["game_id"] for listed_game in listed["games"]]
    assert {listed_game["game"] for listed_game in listed["games"]} == {"renaissance"}
    replayed = await asyncio.wait_for(watch(f"{live}/{game_id}/live"), 30)
    assert [message["version"] for message in replayed] == list(range(1, len(stored) + 1))


async def test_a_command_of_one_game_sent_to_the_other_is_refused_as_wrong_game(
    e2e_stack: E2EStack,
) -> None:
    """A Renature move sent to a Renaissance game (and the reverse) is a 409 ``wrong_game``
    that appends nothing; a malformed one stays a 422."""
    async with (
        GatewayClient(e2e_stack.gateway_url, game="renaissance") as renaissance,
        GatewayClient(e2e_stack.gateway_url) as renature,
    ):
        ids = [await renaissance.create_game(2), await renature.create_game(2, seed="wrong")]
        tokens = [
            [await client.join(game_id, seat, f"p{seat}") for seat in (0, 1)]
            for client, game_id in zip((renaissance, renature), ids, strict=True)
        ]
        for client, game_id, seat_tokens in zip((renaissance, renature), ids, tokens, strict=True):
            await client.start(game_id, seat_tokens[0])
        async with httpx.AsyncClient(base_url=e2e_stack.gateway_url) as http:
            for name, game_id, seat_tokens, foreign in (
                ("renaissance", ids[0], tokens[0], {"type": "EndTurn"}),
                (
                    "renature",
                    ids[1],
                    tokens[1],
                    {"type": "PlaceMarker", "square": {"x": 2, "y": 2}},
                ),
            ):
                before = len(stream_events(e2e_stack, game_id, name))
                for seat_token in seat_tokens:
                    answer = await http.post(
                        f"/games/{game_id}/commands",
                        json={"command_id": "x1", "command": foreign},
                        headers={"Authorization": f"Bearer {seat_token}"},
                    )
                    assert answer.status_code == 409, answer.text
                    assert answer.json()["error"]["code"] == "wrong_game"
                malformed = await http.post(
                    f"/games/{game_id}/commands",
                    json={"command_id": "x2", "command": {"type": "Teleport"}},
                    headers={"Authorization": f"Bearer {seat_tokens[0]}"},
                )
                assert malformed.status_code == 422
                after = len(stream_events(e2e_stack, game_id, name))
                assert after == before
