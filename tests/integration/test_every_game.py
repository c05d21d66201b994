"""Every hosted game through the services, the same tests for each (``game_names()``; no test
here names a game): bots play a whole game through the real gateway over HTTP while every seat
and a spectator follow it on the live WebSocket, with the real rules service and both
projectors on a real Redis; the stored stream is ``simulate``'s game event for event, each
viewer's live frames are exactly the game's own redacted event and view for that viewer (the
services add nothing a seat may not see), the read models are a fresh replay, and the CLI
audits, explains and replays the game from Redis and from its export. A game played by the
rules service is read through the gateway as its game shows it, and retention packs it once
it is over. Every hosted game runs in full: none is marked to fail or skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import structlog
import uvicorn
from structlog.testing import capture_logs
from typer.testing import CliRunner
from websockets.asyncio.client import connect

from devkit.redis_server import free_port
from devkit.waiting import eventually
from eventstore import KeyLayout, RedisEventStore
from gameplatform import game_names, get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedState
from gameserver.cli import app as cli
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.projectors import BoardProjection, Projector, ScoreProjection
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import CommandHandler, RulesService
from gameserver.runtime.bus import CommandEnvelope, Reply
from gameserver.runtime.seed_vault import RedisSeedVault
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy
from support.gateway import gateway_settings
from support.hosting import hosted, replayed

pytestmark = pytest.mark.redis

BOTS = ["greedy", "random"]
LAYOUT = KeyLayout()


class Stack:
    def __init__(self, url: str, redis_url: str, redis: aioredis.Redis) -> None:
        self.url = url
        self.redis_url = redis_url
        self.redis = redis

    @property
    def live(self) -> str:
        return self.url.replace("http", "ws") + "/games"

    async def stream(self, name: str, game_id: str) -> list[Event]:
        game = get_game(name)
        entries = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            await self.redis.xrange(LAYOUT.game_key(game_id)),
        )
        return [game.decode_event(fields[b"event"]) for _, fields in entries]

    async def model(self, kind: str, game_id: str) -> tuple[int, Any] | None:
        key = f"{LAYOUT.base(LAYOUT.partition_of(game_id))}:{kind}:{game_id}"
        version, model = await self.redis.hmget(key, ["version", "model"])
        return None if version is None or model is None else (int(version), json.loads(model))


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    """The gateway (uvicorn on a free port), a rules service and the board and score
    projectors, all in process on the test's Redis."""
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    store = RedisEventStore(redis)
    stop = asyncio.Event()
    projectors = [
        Projector(store, redis, projection, f"{projection.name}-every", batch=50)
        for projection in (BoardProjection(), ScoreProjection())
    ]
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-every")):
        tasks = [asyncio.create_task(p.run(stop, block_ms=100)) for p in projectors]
        serving = asyncio.create_task(server.serve())
        await eventually(lambda: server.started or serving.done(), "uvicorn serving", timeout=10)
        assert server.started
        try:
            yield Stack(f"http://127.0.0.1:{port}", redis_url, redis)
        finally:
            server.should_exit = True
            stop.set()
            await serving
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def watch(url: str) -> list[dict[str, Any]]:
    """Every live frame until the game closes (the gateway closes the channel then)."""
    async with connect(url) as ws:
        return [json.loads(raw) async for raw in ws]


async def play_through_gateway(
    stack: Stack, name: str, seed: str
) -> tuple[str, list[str], list[list[dict[str, Any]]]]:
    """A bot game over HTTP (each bot sees only its seat's state), watched live by the
    spectator and both seats; (game id, tokens, frames of spectator, seat 0, seat 1)."""
    game = get_game(name)
    agents = [game.make_bot(bot, game.bot_seed(seed, seat)) for seat, bot in enumerate(BOTS)]
    async with GatewayClient(stack.url, game=name) as client:
        game_id = await client.create_game(2, seed=seed)
        tokens = [await client.join(game_id, seat, bot) for seat, bot in enumerate(BOTS)]
        urls = [f"{stack.live}/{game_id}/live?include=view"]
        urls += [f"{stack.live}/{game_id}/live?include=view&token={token}" for token in tokens]
        watchers = [asyncio.create_task(watch(url)) for url in urls]
        await client.start(game_id, tokens[0])
        for number in range(2000):
            seat = await _seat_to_move(client, game, game_id, tokens[0])
            if seat is None:
                break
            state = await client.state(game_id, tokens[seat])
            command = agents[seat].choose(state, seat)
            await client.send(game_id, tokens[seat], command, f"b{number}")
        frames = await asyncio.wait_for(asyncio.gather(*watchers), 30)
    return game_id, tokens, list(frames)


async def _seat_to_move(client: GatewayClient, game: Any, game_id: str, token: str) -> int | None:
    """The seat the game waits for; None once it is over (waiting out the service's own
    finishing command, such as a seed reveal)."""
    state = await client.state(game_id, token)
    while not game.is_over(state) and game.to_move(state) is None:
        await asyncio.sleep(0.05)
        state = await client.state(game_id, token)
    return None if game.is_over(state) else game.to_move(state)


def comparable(event: Any) -> dict[str, Any]:
    """An event less what differs between the service's run and ``simulate``'s: the game id,
    provenance, the hash chain and the seed's commitment (the service salts it)."""
    fields: dict[str, Any] = msgspec.to_builtins(event)
    for key in ("game_id", "cause", "prev_hash", "hash", "seed_commitment", "salt"):
        fields.pop(key, None)
    fields.pop("chosen_seed", None)
    return fields


def as_json(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


@pytest.mark.parametrize("name", hosted(game_names()))
async def test_a_bot_game_over_http_and_the_live_websocket_is_the_simulated_game(
    stack: Stack, name: str
) -> None:
    game = get_game(name)
    seed = f"every-game-{name}"
    game_id, _, frames = await play_through_gateway(stack, name, seed)
    stored = await stack.stream(name, game_id)
    simulated, final, _ = game.simulate(seed, BOTS)
    assert [comparable(ev) for ev in stored] == [comparable(ev) for ev in simulated]
    assert game.table(replayed(game, stored)).scores == game.table(final).scores
    # What each viewer received live is the game's own redaction for it, frame by frame.
    for viewer, received in zip([None, 0, 1], frames, strict=True):
        assert [frame["event"]["version"] for frame in received] == list(range(1, len(stored) + 1))
        state: HostedState | None = None
        for frame, event in zip(received, stored, strict=True):
            state = shown = game.evolve(state, event)
            assert frame["event"] == as_json(game.visible_event(event, viewer))
            assert frame["view"] == as_json(game.view(shown, viewer))

    # The read models are a fresh replay of the stream.
    async def models_done() -> bool:
        got = [await stack.model(kind, game_id) for kind in ("board", "score")]
        return all(m is not None and m[0] == len(stored) for m in got)

    await eventually(models_done, "the read models at the last version", timeout=20)
    board = await stack.model("board", game_id)
    assert board is not None
    assert board[1] == as_json(game.view(replayed(game, stored), None))
    projection, fold = ScoreProjection(), None
    for event in stored:
        fold = projection.apply(game, fold, event)
    assert fold is not None
    score = await stack.model("score", game_id)
    assert score is not None
    assert score[1] == json.loads(projection.render(game, fold))


@pytest.mark.parametrize("name", hosted(game_names()))
async def test_the_cli_audits_explains_and_replays_a_served_game_and_its_export(
    stack: Stack, name: str, tmp_path: Path
) -> None:
    """``renature audit|explain GAME_ID`` read the game from Redis (its stream names its game);
    ``audit|explain|replay --events`` read an export with ``--game``."""
    game = get_game(name)
    game_id, _, _ = await play_through_gateway(stack, name, f"every-cli-{name}")
    stored = await stack.stream(name, game_id)
    export = tmp_path / "game.jsonl"
    export.write_bytes(b"".join(game.encode_event(event) + b"\n" for event in stored))
    final = replayed(game, stored)
    runner = CliRunner()

    def run(*args: str) -> Any:
        done = runner.invoke(cli, list(args))
        assert done.exit_code == 0, done.output
        return done

    def printed(*args: str) -> Any:
        """The JSON a command prints last (a warning logged before it may share stdout)."""
        return json.loads(run(*args).stdout.strip().splitlines()[-1])

    from_redis = ["--redis-url", stack.redis_url]
    reports = [
        await asyncio.to_thread(printed, "audit", game_id, *from_redis, "--json"),
        printed("audit", "--events", str(export), "--game", name, "--json"),
    ]
    for report in reports:
        assert (report["ok"], report["finished"], report["game_id"]) == (True, True, game_id)
        assert report["scores"] == game.table(final).scores
    told = printed("explain", "--events", str(export), "--game", name, "--json")
    assert told["scores"] == game.table(final).scores
    svg = tmp_path / "end.svg"
    drawn = run("replay", "--events", str(export), "--game", name, "--svg", str(svg))
    assert all(str(score) in drawn.stdout for score in game.table(final).scores)
    assert svg.read_text().startswith("<svg")


@pytest.mark.parametrize("name", hosted(game_names()))
async def test_bots_play_through_the_gateway_prints_simulates_outcome(
    stack: Stack, name: str
) -> None:
    """``renature bots play --game NAME`` (a process of its own) against the gateway."""
    command = [str(Path(sys.executable).parent / "renature"), "bots", "play", "--game", name]
    command += ["--players", "2"]
    command += ["--gateway", stack.url, "--seed", f"every-bots-{name}", "--bots", ",".join(BOTS)]
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    printed = json.loads(out.decode().strip().splitlines()[-1])
    _, _, expected = get_game(name).simulate(f"every-bots-{name}", BOTS)
    wanted = msgspec.to_builtins(expected)
    for key in ("scores", "ranking", "winners", "events", "bots"):
        assert printed[key] == wanted[key], key
    stored = await stack.stream(name, printed["game_id"])
    assert get_game(name).audit(stored).ok


async def handled(
    handler: CommandHandler,
    name: str,
    game_id: str,
    command: Any,
    cid: str,
    seat: int | None = None,
) -> Reply:
    body = msgspec.json.encode(CommandEnvelope(game_id, cid, command, seat, name))
    return msgspec.json.decode((await handler.handle_batch([body]))[0], type=Reply)


async def played_by_the_rules_service(
    handler: CommandHandler, name: str, game_id: str, moves: int = 3000
) -> None:
    """A bot game through the rules service's handler (the seed from its vault), with a
    refused command now and then (its outcome is stored for a while): created and started if
    it does not exist yet, then ``moves`` commands or to its end."""
    game = get_game(name)
    if await handler.load(game_id) is None:
        setup: list[tuple[msgspec.Struct, int | None]] = [(game.create_command(game_id, 2), None)]
        setup += [(game.join_command(seat, f"p{seat}"), seat) for seat in (0, 1)]
        setup += [(game.start_command(), 0)]
        for number, (command, seat) in enumerate(setup):
            reply = await handled(handler, name, game_id, command, f"s{number}", seat)
            assert reply.status == "accepted", reply
    agents = [game.make_bot(bot, f"{game_id}|{seat}") for seat, bot in enumerate(BOTS)]
    for number in range(moves):
        state = await handler.load(game_id)
        assert state is not None
        if game.is_over(state):
            return
        seat = game.to_move(state)
        assert seat is not None
        if number % 7 == 0:  # the other seat's move: refused
            refused = await handled(handler, name, game_id, game.start_command(), f"x{number}", 1)
            assert refused.status == "rejected"
        command = agents[seat].choose(state, seat)
        reply = await handled(handler, name, game_id, command, f"m{state.version}", seat)
        assert reply.status == "accepted", reply
    assert moves < 3000, "the game did not end"


@pytest.mark.parametrize("name", game_names())
async def test_the_gateway_reads_every_game_the_rules_service_hosts(
    stack: Stack, name: str
) -> None:
    """A game hosted by the rules service, whatever it is, is read through the gateway as its
    game shows it: the summary, the spectator's view and events (secrets blanked as the game
    blanks them) mid-game, then the audit, the explanation and the picture once it is over."""
    game = get_game(name)
    store = RedisEventStore(stack.redis)
    handler = CommandHandler(store, RedisSeedVault(stack.redis, store.layout))
    # The audit, explanation and picture of a whole game take seconds on a loaded machine.
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as http:
        await played_by_the_rules_service(handler, name, "read-me", moves=9)
        stored = await stack.stream(name, "read-me")
        state = replayed(game, stored)
        assert not game.is_over(state)
        summary = (await http.get("/games/read-me")).json()
        assert (summary["game"], summary["phase"]) == (name, game.table(state).phase)
        assert summary["version"] == len(stored)
        spectator = (await http.get("/games/read-me/spectator")).json()
        assert spectator == as_json(game.view(state, None))
        events = (await http.get("/games/read-me/events")).json()
        assert events == [as_json(game.visible_event(event, None)) for event in stored]
        await played_by_the_rules_service(handler, name, "read-me")
        final = replayed(game, await stack.stream(name, "read-me"))
        audited = (await http.get("/games/read-me/audit")).json()
        assert (audited["ok"], audited["scores"]) == (True, game.table(final).scores)
        told = (await http.get("/games/read-me/explanation")).json()
        assert told["scores"] == game.table(final).scores
        picture = await http.get("/games/read-me/picture.svg")
        assert picture.text.startswith("<svg")
        # The dispute viewer reads an export of it (the file names no game: its events do).
        export = b"".join(
            game.encode_event(ev) + b"\n" for ev in await stack.stream(name, "read-me")
        )
        headers = {"Content-Type": "text/plain"}
        inspected = (await http.post("/disputes", content=export, headers=headers)).json()
        assert (inspected["game"], inspected["audit"]["ok"]) == (name, True)
        assert inspected["explanation"]["scores"] == game.table(final).scores


@pytest.mark.parametrize("name", game_names())
async def test_a_finished_game_of_every_game_is_packed_and_still_read_and_audited(
    redis: aioredis.Redis, name: str
) -> None:
    """Retention compacts a finished game of any game after its grace period: the store reads
    it as it was and it still audits."""
    store = RedisEventStore(redis)
    handler = CommandHandler(store, RedisSeedVault(redis, store.layout))
    await played_by_the_rules_service(handler, name, "done")
    before = await store.read("done")
    game = get_game(name)

    def janitor(later_s: float) -> Retention:
        clock = lambda: time.time() + later_s  # noqa: E731
        policy = RetentionPolicy().with_(finished_grace_s=900)
        return Retention(
            redis, KeyLayout(), policy, consumer="janitor-every", clock=clock, stage_of=stage_of
        )

    assert (await janitor(60).run_once()).games_packed == 0
    assert (await janitor(901).run_once()).games_packed == 1
    keys = [k.decode() async for k in redis.scan_iter(match="*:game:*")]
    assert [k for k in keys if k.endswith(":done")] == []
    assert await store.read("done") == before
    report = game.audit([game.decode_event(stored.data) for stored in before])
    assert report.ok, report.findings
    assert report.finished


@pytest.mark.parametrize("name", game_names())
async def test_the_rules_service_logs_a_seat_by_its_name(redis: aioredis.Redis, name: str) -> None:
    """A refused move is logged with the seat's number and its name as the game shows it to
    the players (a colour, silver or gold, ...), whatever the game."""
    game = get_game(name)
    store = RedisEventStore(redis)
    handler = CommandHandler(store, RedisSeedVault(redis, store.layout))
    await played_by_the_rules_service(handler, name, "named", moves=3)
    state = await handler.load("named")
    assert state is not None
    seat = game.to_move(state)
    assert seat is not None
    waiting = 1 - seat
    legal = game.legal_actions(state, seat)[0]
    move = msgspec.structs.replace(legal, seat=waiting)
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        reply = await handled(handler, name, "named", move, "out-of-turn", waiting)
    assert reply.status == "rejected", reply
    refused = [entry for entry in logs if entry["event"] == "command_rejected"]
    assert refused, logs
    assert refused[0]["seat"] == waiting
    assert refused[0]["seat_name"] == game.table(state).colours[waiting]
