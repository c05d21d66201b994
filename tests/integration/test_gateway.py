"""The gateway against a real Redis and the real rules service (both in this event loop).

HTTP goes through ``httpx.ASGITransport``; the live channel needs a real server, so those tests
run the app under uvicorn on a free port. Every refused request is checked for its status, the
common error shape, and that the game's stream did not grow.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import uvicorn
from fastapi import FastAPI
from msgspec.structs import replace
from websockets.asyncio.client import connect

from devkit.redis_server import free_port
from devkit.waiting import eventually
from eventstore import MAX_VERSION, KeyLayout, RedisEventStore
from gameplatform import search
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.routers.reads_routes import PROJECTION_WAIT_S
from gameserver.projectors.read_models import ReadModels
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.bus import CommandEnvelope, Reply
from gameserver.runtime.settings import Settings
from renature import commands as c
from renature import events as e
from renature.adapter import GAME as RENATURE
from renature.audit import AuditReport, audit
from renature.board import load_board
from renature.deal import deal
from renature.explain import Explanation
from renature.game import outcome, play
from renature.perspective import HIDDEN
from renature.rules import legal_actions
from renature.state import GameState
from support.gateway import gateway_settings
from support.hosting import state_as

pytestmark = pytest.mark.redis


@dataclass
class Stack:
    """The app, a typed client, a raw client (for malformed requests) and the store."""

    app: FastAPI
    client: GatewayClient
    http: httpx.AsyncClient
    store: RedisEventStore
    store_redis: aioredis.Redis


@dataclass
class Game:
    game_id: str
    tokens: list[str]


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-gw")),
        app.router.lifespan_context(app),
        GatewayClient("http://gateway", transport=transport) as client,
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(app, client, http, RedisEventStore(redis), redis)


async def started_game(stack: Stack, players: int = 2, seed: str | None = "gw-seed") -> Game:
    game_id = await stack.client.create_game(players, seed=seed)
    tokens = [await stack.client.join(game_id, seat, f"p{seat}") for seat in range(players)]
    await stack.client.start(game_id, tokens[0])
    return Game(game_id, tokens)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The status and the common error shape ``{"error": {"code", "message"}}``."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    return dict(body["error"])


async def post_command(
    stack: Stack, game: Game, token: str | None, command: Any, command_id: str = "cmd-1"
) -> httpx.Response:
    body = {"command_id": command_id, "command": command}
    headers = bearer(token) if token else {}
    return await stack.http.post(f"/games/{game.game_id}/commands", json=body, headers=headers)


# -- the happy path --------------------------------------------------------------------------


async def test_create_join_start_and_play_a_move(stack: Stack) -> None:
    response = await stack.http.post("/games", json={"players": 2})
    assert response.status_code == 201
    created = response.json()
    game_id = created["game_id"]
    assert created["seed"] == "secret"
    assert created["version"] == 1

    joined = await stack.http.post(f"/games/{game_id}/seats/0", json={"name": "Ada"})
    assert joined.status_code == 201
    assert joined.json()["seat"] == 0
    tokens = [joined.json()["token"], await stack.client.join(game_id, 1, "Bob")]
    started = await stack.client.start(game_id, tokens[1])
    assert started.version == 4

    summary = await stack.client.summary(game_id)
    assert summary["phase"] == "place_domino"
    assert summary["seats_joined"] == [0, 1]
    assert summary["current_seat"] == 0
    assert summary["seed"] == "secret"

    actions = await stack.client.legal_actions(game_id, tokens[0])
    assert actions
    assert all(getattr(a, "seat", None) == 0 for a in actions)
    assert await stack.client.legal_actions(game_id, tokens[1]) == []
    result = await stack.client.send(game_id, tokens[0], actions[0], command_id="first")
    assert (result.first_version, result.last_version) == (5, result.version)
    assert await stack.store.version(game_id) == result.version


async def test_seat_is_filled_in_from_the_token(stack: Stack) -> None:
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    response = await post_command(stack, game, game.tokens[0], {"type": "DiscardDomino"})
    # the seat is filled in: the command reaches the rules (which want a domino id)
    assert_error(response, 422, "invalid_command")
    state = await state_as(stack.client, game.game_id, game.tokens[0], GameState)
    domino = state.seats[0].hand[0]
    response = await post_command(
        stack, game, game.tokens[0], {"type": "DiscardDomino", "domino": domino}
    )
    assert response.status_code == 200, response.text
    assert await stack.store.version(game.game_id) > before


async def test_retried_command_id_returns_the_same_reply_and_appends_nothing(
    stack: Stack,
) -> None:
    game = await started_game(stack)
    state = await state_as(stack.client, game.game_id, game.tokens[0], GameState)
    command = msgspec.to_builtins(legal_actions(state, 0)[0])
    first = await post_command(stack, game, game.tokens[0], command, "once")
    version = await stack.store.version(game.game_id)
    again = await post_command(stack, game, game.tokens[0], command, "once")
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert await stack.store.version(game.game_id) == version


async def test_a_command_id_used_again_for_another_command_is_a_409(stack: Stack) -> None:
    game = await started_game(stack)
    state = await state_as(stack.client, game.game_id, game.tokens[0], GameState)
    discards = [a for a in legal_actions(state, 0) if isinstance(a, c.DiscardDomino)]
    discard, other = (msgspec.to_builtins(action) for action in discards[:2])
    assert (await post_command(stack, game, game.tokens[0], discard, "mine")).status_code == 200
    version = await stack.store.version(game.game_id)

    response = await post_command(stack, game, game.tokens[0], other, "mine")

    assert_error(response, 409, "command_id_reused")
    assert await stack.store.version(game.game_id) == version


async def test_chosen_seed_deals_like_the_in_process_game(stack: Stack) -> None:
    game = await started_game(stack, players=3, seed="same-deal")
    reference = deal("same-deal", 3, load_board("base"))
    for seat, token in enumerate(game.tokens):
        view = await stack.client.view(game.game_id, token)
        assert [d.id for d in view.seats[seat].hand or []] == reference.hands[seat]
    summary = await stack.client.summary(game.game_id)
    assert summary["seed"] == "chosen"


# -- bots through the API reproduce the in-process game ---------------------------------------


@pytest.mark.parametrize(
    ("players", "bots"),
    [(2, ["greedy", "random"]), (3, ["random", "greedy", "greedy"]), (4, ["greedy"] * 4)],
)
async def test_bots_through_the_gateway_equal_in_process_play(
    stack: Stack, players: int, bots: list[str]
) -> None:
    seed = f"equal-{players}"
    result = await play_game(stack.client, players, seed, bots)
    log, state = play(players, seed, bots)
    expected = outcome(state, bots, len(log))
    assert result.scores == expected.scores
    assert result.ranking == expected.ranking
    assert result.winners == expected.winners
    assert result.colours == expected.colours
    assert result.events == expected.events
    assert await stack.store.version(result.game_id) == len(log)


async def test_the_search_bot_through_the_gateway_plays_as_in_process_seeing_only_its_seat(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the gateway the search bot is given its seat's own-perspective state (others'
    hands, reserves and the box masked); in process, the whole state. The same game both ways
    shows that it decides on what its seat sees alone."""
    game = RENATURE  # the registry's own adapter
    monkeypatch.setattr(game, "search_budget", search.Budget(iterations=8, rollout_depth=2))
    bots = [search.NAME, "greedy"]
    result = await play_game(stack.client, 2, "equal-mcts", bots)
    log, state = play(2, "equal-mcts", bots, make=game.make_bot)
    expected = outcome(state, bots, len(log))
    assert (result.scores, result.ranking, result.events) == (
        expected.scores,
        expected.ranking,
        expected.events,
    )


# -- errors: status, shape, and nothing appended ----------------------------------------------


async def test_malformed_bodies_are_422_in_the_common_shape(stack: Stack) -> None:
    assert_error(await stack.http.post("/games", json={"players": 9}), 422, "malformed_request")
    assert_error(await stack.http.post("/games", content=b"{nope"), 422, "malformed_request")
    moon = {"players": 2, "board": "moon", "seed": "s"}
    assert_error(await stack.http.post("/games", json=moon), 422, "malformed_request")
    assert await stack.store.list_games() == []
    assert [k async for k in stack.store_redis.scan_iter("*:seed:*")] == []
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    token = game.tokens[0]
    headers = bearer(token)
    url = f"/games/{game.game_id}/commands"
    for body in (
        {"command": {"type": "EndTurn"}},  # no command id
        {"command_id": "x", "command": "EndTurn"},  # command is not an object
        {"command_id": "has space", "command": {"type": "EndTurn"}},  # bad id characters
        {"command_id": "", "command": {"type": "EndTurn"}},
    ):
        assert_error(
            await stack.http.post(url, json=body, headers=headers), 422, "malformed_request"
        )
    for command in (
        {"type": "Teleport"},
        {"type": "PlaceDomino", "domino": "one"},
        {"type": "EndTurn", "extra": 1},
    ):
        assert_error(await post_command(stack, game, token, command), 422, "invalid_command")
    assert await stack.store.version(game.game_id) == before


async def test_unknown_game_is_404(stack: Stack) -> None:
    missing = "0" * 32
    for method, path in (
        ("GET", f"/games/{missing}"),
        ("GET", f"/games/{missing}/spectator"),
        ("GET", f"/games/{missing}/events"),
        ("GET", f"/games/{missing}/view"),
        ("POST", f"/games/{missing}/start"),
    ):
        response = await stack.http.request(method, path, headers=bearer("whatever"))
        assert_error(response, 404, "game_not_found")
    # An id no game can have is malformed, as docs/security.md says: 422.
    malformed = await stack.http.get("/games/bad:id/spectator", headers=bearer("whatever"))
    assert_error(malformed, 422, "malformed_request")
    joined = await stack.http.post(f"/games/{missing}/seats/0", json={"name": "x"})
    assert_error(joined, 404, "game_not_found")
    body = {"command_id": "a", "command": {"type": "EndTurn"}}
    response = await stack.http.post(f"/games/{missing}/commands", json=body)
    assert_error(response, 404, "game_not_found")
    assert_error(await stack.http.get("/nowhere"), 404, "not_found")


async def test_missing_or_wrong_token(stack: Stack) -> None:
    game = await started_game(stack)
    other = await started_game(stack)
    before = await stack.store.version(game.game_id)
    end_turn = {"type": "EndTurn"}
    assert_error(await post_command(stack, game, None, end_turn), 401, "missing_token")
    assert_error(await post_command(stack, game, "forged", end_turn), 403, "invalid_token")
    # a token is only good for its own game
    assert_error(await post_command(stack, game, other.tokens[0], end_turn), 403, "invalid_token")
    for path in ("view", "state", "legal-actions"):
        url = f"/games/{game.game_id}/{path}"
        assert_error(await stack.http.get(url), 401, "missing_token")
        assert_error(await stack.http.get(url, headers=bearer("forged")), 403, "invalid_token")
    events = await stack.http.get(f"/games/{game.game_id}/events", headers=bearer("forged"))
    assert_error(events, 403, "invalid_token")
    assert_error(await stack.http.post(f"/games/{game.game_id}/start"), 401, "missing_token")
    assert await stack.store.version(game.game_id) == before


async def test_acting_for_another_seat_is_403(stack: Stack) -> None:
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    response = await post_command(stack, game, game.tokens[1], {"type": "EndTurn", "seat": 0})
    error = assert_error(response, 403, "wrong_seat")
    assert error["message"] == "You can only act for your own seat."
    assert await stack.store.version(game.game_id) == before


@pytest.mark.parametrize(
    "command",
    [
        {"type": "StartGame"},
        {"type": "FinishGame", "seed": "x"},
        {"type": "JoinGame", "seat": 0, "name": "again"},
        {"type": "CreateGame", "game_id": "g", "players": 2, "seed": "s"},
    ],
)
async def test_set_up_commands_are_refused(stack: Stack, command: dict[str, Any]) -> None:
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    response = await post_command(stack, game, game.tokens[0], command)
    assert_error(response, 403, "not_a_seat_command")
    assert await stack.store.version(game.game_id) == before


async def test_out_of_turn_and_illegal_moves_are_409(stack: Stack) -> None:
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    out_of_turn = await post_command(stack, game, game.tokens[1], {"type": "EndTurn"})
    assert_error(out_of_turn, 409, "not_your_turn")
    state = await state_as(stack.client, game.game_id, game.tokens[1], GameState)
    not_mine = state.seats[1].hand[0]
    discard = {"type": "DiscardDomino", "domino": not_mine}
    assert_error(await post_command(stack, game, game.tokens[0], discard, "d1"), 409, "not_in_hand")
    wrong_step = await post_command(stack, game, game.tokens[0], {"type": "SkipPlant"}, "d2")
    assert_error(wrong_step, 409, "wrong_phase")
    assert await stack.store.version(game.game_id) == before
    # a rejected command id keeps its (rejected) outcome on retry
    assert_error(await post_command(stack, game, game.tokens[0], discard, "d1"), 409, "not_in_hand")


async def test_seats_cannot_be_taken_twice_or_invented(stack: Stack) -> None:
    game_id = await stack.client.create_game(2)
    await stack.client.join(game_id, 0, "Ada")
    before = await stack.store.version(game_id)
    taken = await stack.http.post(f"/games/{game_id}/seats/0", json={"name": "Eve"})
    assert_error(taken, 409, "seat_taken")
    assert_error(
        await stack.http.post(f"/games/{game_id}/seats/2", json={"name": "Eve"}),
        404,
        "no_such_seat",
    )
    assert_error(
        await stack.http.post(f"/games/{game_id}/seats/1", json={"name": ""}),
        422,
        "malformed_request",
    )
    assert await stack.store.version(game_id) == before
    token = await stack.client.join(game_id, 1, "Bob")
    await stack.client.start(game_id, token)
    late = await stack.http.post(f"/games/{game_id}/start", headers=bearer(token))
    assert_error(late, 409, "wrong_phase")


async def test_concurrent_joins_of_one_seat_give_one_token(stack: Stack) -> None:
    game_id = await stack.client.create_game(2)
    url = f"/games/{game_id}/seats/1"
    responses = await asyncio.gather(
        *(stack.http.post(url, json={"name": f"p{i}"}) for i in range(5))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201, 409, 409, 409, 409]
    assert await stack.store.version(game_id) == 2


class SilentSender:
    """A rules service that never answers."""

    async def send(self, envelope: CommandEnvelope, timeout: float) -> Reply:
        await asyncio.sleep(timeout)
        raise TimeoutError


async def test_rules_service_timeout_is_504(stack: Stack, redis_url: str) -> None:
    game = await started_game(stack)
    before = await stack.store.version(game.game_id)
    silent = create_app(gateway_settings(redis_url), sender=SilentSender(), command_timeout=0.2)
    async with (
        silent.router.lifespan_context(silent),
        httpx.AsyncClient(base_url="http://gw", transport=httpx.ASGITransport(app=silent)) as http,
    ):
        body = {"command_id": "slow", "command": {"type": "EndTurn"}}
        url = f"/games/{game.game_id}/commands"
        response = await http.post(url, json=body, headers=bearer(game.tokens[0]))
        assert_error(response, 504, "rules_timeout")
        created = await http.post("/games", json={"players": 2})
        assert_error(created, 504, "rules_timeout")
    assert await stack.store.version(game.game_id) == before


async def test_no_rules_service_at_all_times_out(redis: aioredis.Redis, redis_url: str) -> None:
    app = create_app(gateway_settings(redis_url), command_timeout=0.3)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gw", transport=httpx.ASGITransport(app=app)) as http,
    ):
        assert_error(await http.post("/games", json={"players": 2}), 504, "rules_timeout")
        assert (await http.get("/healthz")).json() == {"status": "ok"}


# -- secrets -----------------------------------------------------------------------------------


async def test_views_show_only_the_seats_own_hand(stack: Stack) -> None:
    game = await started_game(stack, players=3)
    for seat, token in enumerate(game.tokens):
        view = await stack.client.view(game.game_id, token)
        assert view.viewer == seat
        for other in view.seats:
            if other.seat == seat:
                assert other.hand is not None
                assert len(other.hand) == other.hand_count == 3
            else:
                assert other.hand is None
    spectator = await stack.client.view(game.game_id)
    assert spectator.viewer is None
    assert all(s.hand is None for s in spectator.seats)


async def test_own_perspective_state_masks_every_secret(stack: Stack) -> None:
    game = await started_game(stack, players=3)
    for seat, token in enumerate(game.tokens):
        raw = (await stack.http.get(f"/games/{game.game_id}/state", headers=bearer(token))).json()
        state = await state_as(stack.client, game.game_id, token, GameState)
        for number, s in enumerate(state.seats):
            if number == seat:
                assert HIDDEN not in s.hand
                assert len(s.hand) == 3
            else:
                assert set(s.hand) == {HIDDEN}
            assert set(s.reserve) <= {HIDDEN}
        assert set(state.box_dominoes) <= {HIDDEN}
        assert "seed" not in json.dumps(raw).lower().replace("revealed_seed", "")
        full = await stack.store.read(game.game_id)
        # The stream's last hash would let a seat test candidates for the secrets it was not
        # shown (hashes cover unredacted events): the state carries none.
        last_hash = e.decode(full[-1].data).hash
        assert last_hash
        assert state.last_hash == ""
        assert last_hash not in json.dumps(raw)
        created = e.decode(full[0].data)
        assert isinstance(created, e.GameCreated)
        assert created.deal is not None
        real_tokens = set(created.deal.area_tokens.values())
        lying = {t for t in state.area_tokens if t is not None}
        # stand-ins share the front of the real token; they are the first id of that front
        assert len(lying) <= len(real_tokens)
        assert state.seats[seat].hand == tuple(created.deal.hands[seat])
        assert legal_actions(state, seat) == (await stack.client.legal_actions(game.game_id, token))


async def test_events_are_redacted_for_the_caller(stack: Stack) -> None:
    game = await started_game(stack)
    for turn in range(4):  # each discard is followed by a secret draw
        seat = turn % 2
        state = await state_as(stack.client, game.game_id, game.tokens[seat], GameState)
        while state.current == seat:
            await stack.client.send(game.game_id, game.tokens[seat], _safe(state, seat))
            state = await state_as(stack.client, game.game_id, game.tokens[seat], GameState)
    for viewer, token in [(0, game.tokens[0]), (1, game.tokens[1]), (None, None)]:
        events = await stack.client.events(game.game_id, token)
        assert [ev.version for ev in events] == list(range(1, len(events) + 1))
        drawn = [ev for ev in events if isinstance(ev, e.DominoDrawn | e.DominoDiscarded)]
        assert drawn
        for ev in drawn:
            assert (ev.domino is not None) == (ev.seat == viewer)
        assert all(ev.deal is None for ev in events if isinstance(ev, e.GameCreated))
    later = await stack.client.events(game.game_id, None, after=4)
    assert later[0].version == 5


def _safe(state: Any, seat: int) -> c.Command:
    """A move that never needs clouds: discard the first domino, skip the plant, end."""
    if state.phase == "place_domino":
        return c.DiscardDomino(seat, state.seats[seat].hand[0])
    if state.phase == "place_plant":
        return c.SkipPlant(seat)
    return c.EndTurn(seat)


# -- live updates ------------------------------------------------------------------------------


@pytest.fixture
async def served(stack: Stack) -> AsyncIterator[str]:
    """The stack's app served by uvicorn on a free port (WebSockets need a real server)."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(stack.app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started or task.done(), "uvicorn serving", timeout=10)
    if not server.started:
        await task  # it stopped: its exception says why
        raise AssertionError("uvicorn stopped before it served")
    try:
        yield f"ws://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def receive_events(ws: Any, count: int) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(count)]


async def test_live_updates_are_ordered_and_redacted(stack: Stack, served: str) -> None:
    game = await started_game(stack)
    url = f"{served}/games/{game.game_id}/live"
    async with (
        connect(f"{url}?token={game.tokens[0]}") as seat0,
        connect(f"{url}?token={game.tokens[1]}") as seat1,
        connect(url) as spectator,
    ):
        history = {
            name: await receive_events(ws, 4)
            for name, ws in (("0", seat0), ("1", seat1), ("s", spectator))
        }
        for events in history.values():
            assert [ev["version"] for ev in events] == [1, 2, 3, 4]
            assert events[0]["type"] == "GameCreated"
            assert events[0]["deal"] is None
        for seat in (0, 1):  # each discards, so a secret draw follows each discard
            state = await state_as(stack.client, game.game_id, game.tokens[seat], GameState)
            while state.current == seat:
                await stack.client.send(game.game_id, game.tokens[seat], _safe(state, seat))
                state = await state_as(stack.client, game.game_id, game.tokens[seat], GameState)
        version = await stack.store.version(game.game_id)
        live = {
            viewer: await receive_events(ws, version - 4)
            for viewer, ws in ((0, seat0), (1, seat1), (None, spectator))
        }
    for viewer, events in live.items():
        assert [ev["version"] for ev in events] == list(range(5, version + 1))
        secret = [ev for ev in events if ev["type"] in ("DominoDrawn", "DominoDiscarded")]
        assert {ev["seat"] for ev in secret} == {0, 1}
        for ev in secret:
            assert (ev["domino"] is not None) == (ev["seat"] == viewer), (viewer, ev)


async def test_live_resumes_after_a_version_and_refuses_bad_tokens(
    stack: Stack, served: str
) -> None:
    game = await started_game(stack)
    url = f"{served}/games/{game.game_id}/live"
    async with connect(f"{url}?after=3") as ws:
        (event,) = await receive_events(ws, 1)
        assert event["version"] == 4
        assert event["type"] == "GameStarted"
    async with connect(f"{url}?token=forged") as ws:
        error = json.loads(await ws.recv())
        assert error["error"]["code"] == "invalid_token"
        await ws.wait_closed()
        assert ws.close_code == 4403
    async with connect(f"{served}/games/{'0' * 32}/live") as ws:
        assert json.loads(await ws.recv())["error"]["code"] == "game_not_found"
        await ws.wait_closed()
        assert ws.close_code == 4404
    async with connect(f"{url}?after={2**64}") as ws:  # no version can be that large
        assert json.loads(await ws.recv())["error"]["code"] == "malformed_request"
        await ws.wait_closed()
        assert ws.close_code == 4422


async def test_events_after_a_version_beyond_any_are_none_or_refused(stack: Stack) -> None:
    game = await started_game(stack)
    url = f"/games/{game.game_id}/events"
    response = await stack.http.get(url, params={"after": MAX_VERSION})
    assert response.status_code == 200
    assert response.json() == []
    assert_error(await stack.http.get(url, params={"after": 2**64}), 422, "malformed_request")
    assert_error(await stack.http.get(url, params={"after": -1}), 422, "malformed_request")


async def test_redis_down_is_503() -> None:
    app = create_app(gateway_settings(f"redis://127.0.0.1:{free_port()}/0"), command_timeout=0.3)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gw", transport=transport) as http,
    ):
        assert_error(await http.get(f"/games/{'0' * 32}/spectator"), 503, "store_unavailable")
        assert_error(await http.get("/healthz"), 503, "redis_unavailable")


async def test_a_server_without_chosen_seeds_refuses_a_seed_and_creates_nothing(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """Whoever chooses the seed knows every hand: by default the gateway deals from a secret
    seed only."""
    app = create_app(gateway_settings(redis_url), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        response = await http.post("/games", json={"players": 2, "seed": "i-know-the-deal"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "chosen_seeds_disabled"
    assert [k async for k in redis.scan_iter("*")] == []


# -- dispute audit and explanation of a finished game -----------------------------------------


async def test_audit_and_explanation_of_a_finished_game(stack: Stack) -> None:
    result = await play_game(stack.client, 3, "gw-audit", ["greedy", "random", "greedy"])
    game_id = result.game_id
    response = await stack.http.get(f"/games/{game_id}/audit")
    assert response.status_code == 200, response.text
    report = msgspec.json.decode(response.content, type=AuditReport)
    assert report.ok, report.findings
    assert (report.first_bad, report.findings) == (None, [])
    assert report.finished
    assert report.game_id == game_id
    assert report.events == await stack.store.version(game_id)
    assert report.scores == result.scores
    assert report.winners == result.winners
    stored = [e.decode(s.data) for s in await stack.store.read(game_id)]
    assert report == audit(stored)  # the gateway reports what the audit of the store gives

    response = await stack.http.get(f"/games/{game_id}/explanation")
    assert response.status_code == 200, response.text
    explanation = msgspec.json.decode(response.content, type=Explanation)
    assert explanation.scores == result.scores
    assert explanation.ranking == result.ranking
    assert explanation.colours == result.colours
    for seat, score in enumerate(result.scores):
        lines = [line for line in explanation.lines if line.seat == seat]
        assert sum(line.points for line in lines) == score
        assert lines[-1].total == score
    colour = result.colours[1]
    response = await stack.http.get(f"/games/{game_id}/explanation", params={"seat": colour})
    assert response.status_code == 200, response.text
    mine = msgspec.json.decode(response.content, type=Explanation)
    assert mine.lines == [line for line in explanation.lines if line.seat == 1]
    assert {line.colour for line in mine.lines} == {colour}
    assert mine.lines[-1].total == result.scores[1]
    nobody = next(c for c in ("orange", "blue", "black", "white") if c not in result.colours)
    response = await stack.http.get(f"/games/{game_id}/explanation", params={"seat": nobody})
    error = assert_error(response, 404, "no_such_seat")
    assert nobody in error["message"]


async def test_audit_and_explanation_wait_for_the_end_of_the_game(stack: Stack) -> None:
    """Before the seed is revealed the stream holds every hand: nothing is shown."""
    game = await started_game(stack)
    for path in ("audit", "explanation", "explanation?seat=orange"):
        response = await stack.http.get(f"/games/{game.game_id}/{path}")
        error = assert_error(response, 409, "game_not_finished")
        assert "not finished" in error["message"]
        assert "deal" not in response.text
    for path in (f"{'0' * 32}/audit", f"{'0' * 32}/explanation"):
        assert_error(await stack.http.get(f"/games/{path}"), 404, "game_not_found")
    assert_error(await stack.http.get("/games/bad:id/audit"), 422, "malformed_request")


async def test_the_audit_names_the_first_bad_event_of_a_tampered_stream(stack: Stack) -> None:
    """A stream written past the rules service (a points value raised after the fact)."""
    log, _ = play(2, "forged", ["greedy", "greedy"], game_id="forged-game")
    at = next(i for i, ev in enumerate(log) if isinstance(ev, e.PlantPlaced))
    plant = log[at]
    assert isinstance(plant, e.PlantPlaced)
    log[at] = replace(plant, points=plant.points + 5)
    await stack.store.append(
        "forged-game",
        command_id="forgery",
        expected_version=0,
        events=[e.encode(ev) for ev in log],
        outcome=b"{}",
    )
    response = await stack.http.get("/games/forged-game/audit")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is False
    assert body["first_bad"]["version"] == plant.version
    assert body["first_bad"]["check"] == "hash chain"
    assert "PlantPlaced" in body["first_bad"]["message"]
    assert body["findings"][0] == body["first_bad"]


async def test_a_model_read_waits_briefly_for_the_first_projection(stack: Stack) -> None:
    """No projector runs here. The board of a game created a moment ago is answered as soon
    as its model is written, within `PROJECTION_WAIT_S`; a model never written is
    ``not_projected`` once that wait is over."""
    game_id = await stack.client.create_game(2, seed="wait")
    board = ReadModels(stack.store_redis, KeyLayout(), "board")

    async def projected_later() -> None:
        await asyncio.sleep(0.2)
        await board.write((game_id, 1, (b'{"projected":true}',), ""))

    projecting = asyncio.ensure_future(projected_later())
    response = await stack.http.get(f"/games/{game_id}/board")
    await projecting
    assert response.status_code == 200
    assert response.json() == {"projected": True}
    assert response.headers["X-Model-Version"] == "1"

    started = asyncio.get_running_loop().time()
    assert_error(await stack.http.get(f"/games/{game_id}/scores"), 404, "not_projected")
    assert asyncio.get_running_loop().time() - started >= 0.9 * PROJECTION_WAIT_S
