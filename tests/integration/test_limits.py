"""The gateway's limits against a real Redis and the real rules service (an attacker's review).

Each test is one attack: a body too large or too deep, strings too long, a flood of creations,
a token sending refused commands in a loop, too many live connections, a flood of audits, a
corrupted stream, a token of a long-finished game. Every refused request is checked for its
answer and for leaving nothing behind in Redis.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from fastapi import FastAPI
from websockets.asyncio.client import connect

from eventstore import KeyLayout, RedisEventStore
from gameplatform.forms import PLAYER_NAME_PATTERN
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.gateway.expiry import RECHECK_S
from gameserver.gateway.front_door import GuardedHttpTools
from gameserver.gateway.token_cache import DEFAULT_REVALIDATE_S
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import FrontDoor, RateLimits
from renature import events as e
from renature.audit import AuditReport
from renature.explain import Explanation
from renature.state import GameState
from support.gateway import (
    gateway_settings,
    refused_handshake,
    refused_live,
    serving,
    started_game,
)
from support.hosting import state_as

pytestmark = pytest.mark.redis

LAYOUT = KeyLayout()
LIMITS = RateLimits(
    create="6/minute",
    seat="1000/minute",
    read="1000/minute",
    refused="5/minute",
    refused_per_address="50/minute",
    live="100/minute",
    live_per_address=2,
    live_per_game=3,
)
HOME = ("10.0.0.1", 40001)
ELSEWHERE = ("10.0.0.2", 40002)


@dataclass
class Stack:
    app: FastAPI
    redis: aioredis.Redis
    store: RedisEventStore
    clients: dict[tuple[str, int], httpx.AsyncClient]

    def http(self, address: tuple[str, int] = HOME) -> httpx.AsyncClient:
        if address not in self.clients:
            transport = httpx.ASGITransport(app=self.app, client=address)
            self.clients[address] = httpx.AsyncClient(
                base_url="http://gateway", transport=transport, timeout=30
            )
        return self.clients[address]

    def client(self, address: tuple[str, int] = HOME) -> GatewayClient:
        transport = httpx.ASGITransport(app=self.app, client=address)
        return GatewayClient("http://gateway", transport=transport)


async def stack_of(app: FastAPI, redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    stack = Stack(app, redis, RedisEventStore(redis), {})
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-limits")),
        app.router.lifespan_context(app),
    ):
        try:
            yield stack
        finally:
            for client in stack.clients.values():
                await client.aclose()
            if (limiter := getattr(app.state, "limiter", None)) is not None:
                await limiter.aclose()


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    """A gateway without rate limits (the size limits are always on)."""
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    async for stack in stack_of(app, redis, redis_url):
        yield stack


@pytest.fixture
async def limited(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    """A gateway with small rate limits and seat tokens that lapse 1 s after the end."""
    app = create_app(
        gateway_settings(
            redis_url, allow_chosen_seeds=True, limits=LIMITS, token_ttl_after_end_s=1
        ),
        command_timeout=5.0,
    )
    async for stack in stack_of(app, redis, redis_url):
        yield stack


async def stored(redis: aioredis.Redis) -> dict[str, int]:
    """Every key but the rate limiters' own, with its size (entries of a stream, fields of a
    hash, bytes of a string): what a request may have left behind."""
    sizes: dict[str, int] = {}
    async for raw in redis.scan_iter("*"):
        key = raw.decode()
        if key.startswith(("rn:limits:", "{rn:limits:")):
            continue
        kind = cast(bytes, await redis.type(key)).decode()
        size = {
            "stream": redis.xlen,
            "hash": redis.hlen,
            "string": redis.strlen,
            "list": redis.llen,
            "set": redis.scard,
            "zset": redis.zcard,
        }.get(kind)
        if size is not None:  # "none": it expired meanwhile
            sizes[key] = int(await size(key))
    return sizes


async def new_game(http: httpx.AsyncClient, players: int = 2) -> tuple[str, list[str]]:
    return await started_game(http, players=players, seed="limits")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def error_of(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text[:500]
    body = response.json()
    assert body["error"]["code"] == code
    assert len(response.content) < 1_000  # never an echo of what was sent
    return str(body["error"]["message"])


# -- sizes -------------------------------------------------------------------------------------


class Counted:
    """A request body of ``total`` bytes sent in 64 KB chunks, counting what was taken."""

    def __init__(self, total: int, head: bytes = b'{"players": 2, "board": "') -> None:
        self.total = total
        self.head = head
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunk = b"x" * 65_536
        yield self.head
        self.sent += len(self.head)
        while self.sent < self.total:
            self.sent += len(chunk)
            yield chunk


async def test_a_100_mb_body_is_refused_while_it_streams(stack: Stack) -> None:
    before = await stored(stack.redis)
    body = Counted(100 * 1024 * 1024)
    response = await stack.http().post("/games", content=body.__aiter__())
    error_of(response, 413, "body_too_large")
    assert body.sent < 1024 * 1024, f"{body.sent} bytes were read"
    declared = await stack.http().post(
        "/games",
        content=b"{}",
        headers={"Content-Length": str(100 * 1024 * 1024), "Content-Type": "application/json"},
    )
    error_of(declared, 413, "body_too_large")
    assert await stored(stack.redis) == before


async def test_a_game_with_a_20_mb_board_name_stores_nothing(stack: Stack) -> None:
    before = await stored(stack.redis)
    huge = {"players": 2, "board": "b" * 20_000_000}
    error_of(await stack.http().post("/games", json=huge), 413, "body_too_large")
    long = {"players": 2, "board": "b" * 20_000}  # within the body cap: refused by its name
    error_of(await stack.http().post("/games", json=long), 422, "malformed_request")
    assert await stored(stack.redis) == before


async def test_strings_of_a_seat_command_and_a_name_are_bounded_before_anything_is_sent(
    stack: Stack,
) -> None:
    game_id, tokens = await new_game(stack.http())
    before = await stored(stack.redis)
    url = f"/games/{game_id}/commands"
    for command in (
        {"type": "CloudAction", "kind": "change_joker", "animal": "owl" * 10_000},
        {"type": "CloudAction", "kind": "change_joker", "animal": "unicorn"},
        {"type": "EndTurn", "x" * 30_000: 1},
    ):
        body = {"command_id": "big", "command": command}
        response = await stack.http().post(url, json=body, headers=bearer(tokens[0]))
        message = error_of(response, 422, "invalid_command")
        assert len(message) <= 450  # whatever was sent
    assert await stored(stack.redis) == before  # no command entry, no stored outcome
    game = await stack.http().post("/games", json={"players": 2})
    error_of(
        await stack.http().post(
            f"/games/{game.json()['game_id']}/seats/0", json={"name": "Eve\u202egnirts"}
        ),
        422,
        "malformed_request",
    )
    for malformed in ("g" * 10_000, "a{b}", "a:b"):  # as the documentation says: 422
        error_of(await stack.http().get(f"/games/{malformed}/spectator"), 422, "malformed_request")
        error_of(await stack.http().get(f"/games/{malformed}/view"), 422, "malformed_request")


@pytest.mark.parametrize("depth", [40, 500, 980, 5_000])
async def test_deep_json_is_a_4xx_never_a_500(stack: Stack, depth: int) -> None:
    game_id, tokens = await new_game(stack.http())
    before = await stored(stack.redis)
    nested = "[" * depth + "]" * depth
    body = '{"command_id": "deep", "command": {"type": "EndTurn", "x": ' + nested + "}}"
    response = await stack.http().post(
        f"/games/{game_id}/commands",
        content=body,
        headers={**bearer(tokens[0]), "Content-Type": "application/json"},
    )
    error_of(response, 422, "body_too_deep")
    create = '{"players": 2, "board": ' + nested + "}"
    error_of(
        await stack.http().post(
            "/games", content=create, headers={"Content-Type": "application/json"}
        ),
        422,
        "body_too_deep",
    )
    assert await stored(stack.redis) == before


# -- rate limits -------------------------------------------------------------------------------


async def test_a_flood_of_creations_gets_429_while_another_address_plays(limited: Stack) -> None:
    flood = limited.http(HOME)
    answers = [await flood.post("/games", json={"players": 2}) for _ in range(12)]
    statuses = [a.status_code for a in answers]
    assert statuses[:6] == [201] * 6
    assert set(statuses[6:]) == {429}
    refused = answers[-1]
    error_of(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    games = await limited.store.list_games()
    assert len(games) == 6  # nothing of a refused creation reached the rules service

    other = limited.http(ELSEWHERE)  # another address still creates, joins and plays
    game_id, tokens = await new_game(other)
    legal = await other.get(f"/games/{game_id}/legal-actions", headers=bearer(tokens[0]))
    assert legal.status_code == 200
    move = {"command_id": "m1", "command": legal.json()[0]}
    played = await other.post(f"/games/{game_id}/commands", json=move, headers=bearer(tokens[0]))
    assert played.status_code == 200, played.text


async def test_a_token_sending_refused_commands_in_a_loop_gets_429(limited: Stack) -> None:
    http = limited.http(ELSEWHERE)
    game_id, tokens = await new_game(http)
    waiting = tokens[1]  # not this seat's turn: every EndTurn is refused (409)
    url = f"/games/{game_id}/commands"
    before = await stored(limited.redis)
    answers = []
    for number in range(15):
        body = {"command_id": f"loop-{number}", "command": {"type": "EndTurn"}}
        answers.append(await http.post(url, json=body, headers=bearer(waiting)))
    statuses = [a.status_code for a in answers]
    assert statuses[:5] == [409] * 5
    assert set(statuses[5:]) == {429}
    assert int(answers[-1].headers["Retry-After"]) >= 1
    after = await stored(limited.redis)
    outcomes = [k for k in after if k not in before]
    assert len(outcomes) <= 5, outcomes  # the refused-before-sent ones stored nothing
    # The player whose turn it is still plays.
    legal = await http.get(f"/games/{game_id}/legal-actions", headers=bearer(tokens[0]))
    move = {"command_id": "ok-1", "command": legal.json()[0]}
    played = await http.post(url, json=move, headers=bearer(tokens[0]))
    assert played.status_code == 200, played.text


async def test_made_up_tokens_do_not_escape_the_address_quota(
    redis: aioredis.Redis, redis_url: str
) -> None:
    limits = RateLimits(refused_per_address="8/minute", seat="1000/minute", read="1000/minute")
    app = create_app(gateway_settings(redis_url, limits=limits), command_timeout=5.0)
    async for stack in stack_of(app, redis, redis_url):
        http = stack.http(HOME)
        answers = [
            await http.get("/games/nothere/view", headers=bearer(f"made-up-{n}")) for n in range(3)
        ]
        assert {a.status_code for a in answers} == {404}  # not found does not count
        game = await http.post("/games", json={"players": 2})
        game_id = game.json()["game_id"]
        statuses = [
            (await http.get(f"/games/{game_id}/view", headers=bearer(f"made-up-{n}"))).status_code
            for n in range(12)
        ]
        assert statuses[:8] == [403] * 8
        assert set(statuses[8:]) == {429}
        assert (await stack.http(ELSEWHERE).get(f"/games/{game_id}")).status_code == 200


async def test_made_up_tokens_from_a_shared_address_never_lock_out_a_real_player(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """The attack: behind one proxy address, 120 requests with made-up tokens used to
    spend the address's refused quota, and a real player's valid token then got 429."""
    limits = RateLimits(read="1000/minute")  # refused_per_address at its default, 120/minute
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True, limits=limits))
    async for stack in stack_of(app, redis, redis_url):
        http = stack.http(HOME)
        game_id, tokens = await new_game(stack.http(ELSEWHERE))
        statuses = Counter(
            [
                (await http.get(f"/games/{game_id}/view", headers=bearer(f"fake-{n}"))).status_code
                for n in range(130)
            ]
        )
        assert statuses[403] == 120
        assert statuses[429] == 10  # the made-up tokens' address is over its refused quota
        for path in ("view", "legal-actions"):  # the player on the same address is not
            answer = await http.get(f"/games/{game_id}/{path}", headers=bearer(tokens[0]))
            assert answer.status_code == 200, answer.text
        # and anonymous requests of that address are refused with the made-up ones
        error_of(await http.get(f"/games/{game_id}/spectator"), 429, "rate_limited")


async def test_a_made_up_bearer_counts_in_its_address_read_bucket(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """The attack: a random ``Authorization: Bearer`` escaped the address's read limit
    on every route that ignores tokens (60/60 answered against 20/60 without the header)."""
    limits = RateLimits(read="20/minute", seat="1000/minute", refused_per_address="1000/minute")
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True, limits=limits))
    async for stack in stack_of(app, redis, redis_url):
        game_id, tokens = await new_game(stack.http(ELSEWHERE))
        paths = (f"/games/{game_id}/spectator", f"/games/{game_id}", "/games")
        for number, path in enumerate(paths):
            http = stack.http((f"10.0.1.{number}", 40000))  # a fresh read bucket each
            answers = Counter(
                [
                    (await http.get(path, headers=bearer(uuid.uuid4().hex))).status_code
                    for _ in range(30)
                ]
            )
            assert answers == {200: 20, 429: 10}, (path, answers)
        # a seat's token counts in its own bucket: the player still reads from that address
        seated = await http.get(f"/games/{game_id}/view", headers=bearer(tokens[1]))
        assert seated.status_code == 200


async def test_disputes_have_a_rate_of_their_own(redis: aioredis.Redis, redis_url: str) -> None:
    limits = RateLimits(dispute="3/minute", read="1000/minute")
    app = create_app(gateway_settings(redis_url, limits=limits), command_timeout=5.0)
    async for stack in stack_of(app, redis, redis_url):
        http = stack.http(HOME)
        statuses = [
            (await http.post("/disputes", content=b"no events", headers=bearer("x"))).status_code
            for _ in range(5)
        ]
        assert statuses == [200, 200, 200, 429, 429]
        assert (await http.get("/games")).status_code == 200  # reads are another bucket


@pytest.fixture
async def served(limited: Stack) -> AsyncIterator[str]:
    async with serving(limited.app) as address:
        yield address


async def released(redis: aioredis.Redis, key: str) -> None:
    """Wait (5 s at most) until every lease of ``key`` is given back."""
    deadline = time.monotonic() + 5
    while await redis.zcard(key):
        assert time.monotonic() < deadline, f"{key} still holds leases"
        await asyncio.sleep(0.02)


async def test_live_connections_are_capped_per_address_and_per_game(
    limited: Stack, served: str, caplog: pytest.LogCaptureFixture
) -> None:
    game_id, _ = await new_game(limited.http(ELSEWHERE))
    other_id, _ = await new_game(limited.http(ELSEWHERE))
    url = f"ws://{served}/games/{game_id}/live"
    async with connect(url) as first, connect(url) as second:
        for ws in (first, second):  # both get the game's history
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["version"] == 1
        third = await refused_live(url)  # a third from the same address
        assert third["error"]["code"] == "rate_limited"
        # Told once, the address is refused from memory until its Retry-After: the
        # handshake itself is answered 429.
        status, retry_after, body = await refused_handshake(f"ws://{served}/games/{other_id}/live")
        assert (status, body["error"]["code"]) == (429, "rate_limited")
        assert retry_after is not None
        assert int(retry_after) >= 1
        # A denied handshake is no error of the server: uvicorn's line about it is dropped.
        assert not [r for r in caplog.records if "without completing handshake" in r.getMessage()]
    # Closed connections give their leases back.
    address_key = "rn:limits:live:address:{127.0.0.1}"
    await released(limited.redis, address_key)
    async with connect(url) as again:
        assert json.loads(await asyncio.wait_for(again.recv(), 5))["version"] == 1
    # Per game: other addresses (127.0.0.2, .3 ...) up to the game's cap of 3.
    game_key = f"rn:limits:live:game:{{{game_id}}}"
    await released(limited.redis, address_key)
    await released(limited.redis, game_key)
    await limited.redis.zadd(game_key, {f"held-{n}": time.time() + 60 for n in range(3)})
    refused = await refused_live(url)
    assert refused["error"]["code"] == "rate_limited"


async def test_a_refused_spectator_is_answered_by_the_front_door_before_the_app(
    limited: Stack,
) -> None:
    """Under the gateway's own protocol (`GuardedHttpTools`, as `renature serve gateway` runs
    it), a spectator refused before and back within its ``Retry-After`` is answered 429 by the
    front door (nothing reaches the app); a seat's handshake, and a spectator of another
    address, still reach the app."""
    refusals = limited.app.state.limiter.live_refusals
    protocol = GuardedHttpTools.configured(FrontDoor(), refusals)
    async with serving(limited.app, http=protocol) as served:
        game_id, tokens = await new_game(limited.http(ELSEWHERE))
        url = f"ws://{served}/games/{game_id}/live"
        async with connect(url), connect(url):  # the address's cap of 2
            third = await refused_live(url)  # Redis says no: the app's answer, once
            assert third["error"]["code"] == "rate_limited"
            assert protocol.refusals["rate_limited"] == 0
            status, retry_after, body = await refused_handshake(url)
            assert (status, body["error"]["code"]) == (429, "rate_limited")
            assert retry_after is not None
            assert int(retry_after) >= 1
            assert protocol.refusals["rate_limited"] == 1  # the front door's answer
            remembered = refusals.refused
            seat = f"{url}?token={tokens[0]}"
            async with connect(seat) as ws:  # a seat's channel is never looked up there
                assert json.loads(await asyncio.wait_for(ws.recv(), 5))["version"] >= 1
            assert protocol.refusals["rate_limited"] == 1
            assert refusals.refused == remembered


async def test_spectators_cannot_take_a_seats_live_slots(limited: Stack, served: str) -> None:
    """The attack: spectators filled a game's live slots and its seats got 4429/429.
    A seat's connections hold leases of their own (``live_per_seat``)."""
    game_id, tokens = await new_game(limited.http(ELSEWHERE))
    game_key = f"rn:limits:live:game:{{{game_id}}}"
    await limited.redis.zadd(game_key, {f"spectator-{n}": time.time() + 60 for n in range(3)})
    spectator = await refused_live(f"ws://{served}/games/{game_id}/live")
    assert spectator["error"]["code"] == "rate_limited"
    url = f"ws://{served}/games/{game_id}/live?token={tokens[0]}"
    async with connect(url) as seat, connect(url) as again:  # over the address's cap of 2 too
        for ws in (seat, again):
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["version"] == 1
    # A made-up token is a spectator: refused as the game's cap was remembered (429 handshake).
    status, _, made_up = await refused_handshake(f"ws://{served}/games/{game_id}/live?token=x")
    assert (status, made_up["error"]["code"]) == (429, "rate_limited")


async def test_server_sent_event_streams_hold_live_leases_too(limited: Stack) -> None:
    game_id, _ = await new_game(limited.http(ELSEWHERE))
    held = f"rn:limits:live:address:{{{HOME[0]}}}"  # two streams open elsewhere already
    await limited.redis.zadd(held, {f"held-{n}": time.time() + 60 for n in range(2)})
    response = await limited.http(HOME).get(f"/games/{game_id}/events/stream")
    error_of(response, 429, "rate_limited")
    assert int(response.headers["Retry-After"]) >= 1
    await limited.redis.zrem(held, "held-0", "held-1")
    assert await limited.redis.zcard(held) == 0


async def answers(ws: Any, count: int) -> list[dict[str, Any]]:
    """The next ``count`` answers on a live channel (event frames in between are skipped)."""
    out: list[dict[str, Any]] = []
    while len(out) < count:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if "answer" in frame:
            out.append(frame["answer"])
    return out


async def test_messages_on_the_live_channel_are_limited_like_requests(
    redis: aioredis.Redis, redis_url: str
) -> None:
    limits = RateLimits(seat="4/minute", read="1000/minute", create="1000/minute")
    app = create_app(
        gateway_settings(redis_url, allow_chosen_seeds=True, limits=limits), command_timeout=5.0
    )
    async for stack in stack_of(app, redis, redis_url):
        game_id, tokens = await new_game(stack.http())
        url = f"ws://{{}}/games/{game_id}/live?token={tokens[1]}"
        async with serving(app) as address, connect(url.format(address)) as ws:
            deep = '{"command_id": "deep", "command": ' + "[" * 50 + "]" * 50 + "}"
            await ws.send(deep)
            (answer,) = await answers(ws, 1)
            assert (answer["command_id"], answer["http_status"]) == ("deep", 422)
            assert answer["error"]["code"] == "body_too_deep"
            for number in range(6):
                body = {"command_id": f"w{number}", "command": {"type": "EndTurn"}}
                await ws.send(json.dumps(body))
            # The seat's opening and the deep message counted first; w0 and w1 are the app's
            # to answer, the rest are refused before the app sees them.
            seen: dict[str, dict[str, Any]] = {}
            while "w5" not in seen:
                (answer,) = await answers(ws, 1)
                seen[answer["command_id"]] = answer
            for number in range(6):
                answer = seen.get(f"w{number}", {"http_status": None})
                assert (answer["http_status"] == 429) is (number >= 2), answer
            assert seen["w5"]["error"]["code"] == "rate_limited"


# -- finished games: cached reads, corrupted streams, lapsing tokens ----------------------------


async def finished_game(stack: Stack, address: tuple[str, int] = ELSEWHERE) -> tuple[str, Any]:
    async with stack.client(address) as client:
        result = await play_game(client, 2, "limits-finished", ["greedy", "random"])
    return result.game_id, result


async def test_audits_of_a_finished_game_are_computed_once(
    stack: Stack, redis: aioredis.Redis, redis_url: str
) -> None:
    game_id, result = await finished_game(stack)
    answers = await asyncio.gather(
        *(stack.http().get(f"/games/{game_id}/audit") for _ in range(20)),
        *(stack.http().get(f"/games/{game_id}/explanation") for _ in range(20)),
    )
    assert {a.status_code for a in answers} == {200}
    report = msgspec.json.decode(answers[0].content, type=AuditReport)
    assert report.ok
    assert report.scores == result.scores
    explanation = msgspec.json.decode(answers[-1].content, type=Explanation)
    assert explanation.scores == result.scores
    finished = stack.app.state.gateway.finished
    assert finished.computed == 2  # one audit, one explanation
    # Another gateway instance serves them from Redis without working them out again.
    other = create_app(gateway_settings(redis_url), command_timeout=5.0)
    async with (
        other.router.lifespan_context(other),
        httpx.AsyncClient(base_url="http://g2", transport=httpx.ASGITransport(other)) as http,
    ):
        again = await http.get(f"/games/{game_id}/audit")
        assert again.content == answers[0].content
        assert other.state.gateway.finished.computed == 0
    assert await redis.ttl(f"{LAYOUT.base(LAYOUT.partition_of(game_id))}:reads:{game_id}") > 0


async def rewrite(redis: aioredis.Redis, game_id: str, change: Any) -> None:
    """Rewrite a stored game stream with ``change(version, fields)`` applied to each entry."""
    key = LAYOUT.game_key(game_id)
    entries = cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(key))
    await redis.delete(key)
    for entry_id, fields in entries:
        version = int(entry_id.decode().partition("-")[2])
        await redis.xadd(key, change(version, dict(fields)), id=entry_id)


@pytest.mark.parametrize("corruption", ["unreadable", "forged"])
async def test_the_audit_of_a_corrupted_stream_answers_its_findings(
    stack: Stack, redis: aioredis.Redis, redis_url: str, corruption: str
) -> None:
    game_id, _ = await finished_game(stack)
    events = [e.decode(s.data) for s in await stack.store.read(game_id)]
    placed = next(ev for ev in events if isinstance(ev, e.DominoPlaced))

    def change(version: int, fields: dict[bytes, bytes]) -> dict[bytes, bytes]:
        if version != placed.version:
            return fields
        if corruption == "unreadable":
            return {**fields, b"event": b'{"type": "DominoPlaced", "game_id": '}
        forged = json.loads(fields[b"event"])
        forged["domino"] = 10_000  # no such domino: the core cannot even fold it
        return {**fields, b"event": json.dumps(forged).encode()}

    await rewrite(redis, game_id, change)
    fresh = create_app(gateway_settings(redis_url), command_timeout=5.0)  # no cached state
    async with (
        fresh.router.lifespan_context(fresh),
        httpx.AsyncClient(base_url="http://g", transport=httpx.ASGITransport(fresh)) as http,
    ):
        response = await http.get(f"/games/{game_id}/audit")
        assert response.status_code == 200, response.text
        report = msgspec.json.decode(response.content, type=AuditReport)
        assert not report.ok
        assert report.first_bad is not None
        assert report.first_bad.version <= placed.version
        explained = await http.get(f"/games/{game_id}/explanation")
        assert explained.status_code in (200, 409), explained.text
        if explained.status_code == 409:
            assert explained.json()["error"]["code"] == "game_corrupt"


async def test_seat_tokens_lapse_a_set_time_after_the_end(limited: Stack) -> None:
    http = limited.http(ELSEWHERE)
    game_id, tokens = await new_game(http)
    async with limited.client(ELSEWHERE) as client:
        seat = 0
        for number in range(2_000):
            state = await state_as(client, game_id, tokens[seat], GameState)
            if state.phase in ("final_scoring", "finished"):
                break
            seat = state.current
            legal = await client.legal_actions(game_id, tokens[seat])
            await client.send(game_id, tokens[seat], legal[0], command_id=f"t-{number}")
        deadline = time.monotonic() + 10
        while (await state_as(client, game_id, tokens[0], GameState)).phase != "finished":
            assert time.monotonic() < deadline, "the game did not finish"
            await asyncio.sleep(0.05)
    view = await http.get(f"/games/{game_id}/view", headers=bearer(tokens[1]))
    assert view.status_code == 200  # right after the end a player still sees the final view
    # The seat hash lapses 1 s after a seated request finds the game ended (the gateway looks
    # at a game it saw running again after expiry.RECHECK_S); a gateway that resolved a token
    # lately trusts its answer a few seconds more (token_cache.DEFAULT_REVALIDATE_S).
    ended = time.monotonic()
    for token in tokens:
        while (
            answer := await http.get(f"/games/{game_id}/view", headers=bearer(token))
        ).status_code == 200:
            late = RECHECK_S + 1 + DEFAULT_REVALIDATE_S + 3
            assert time.monotonic() - ended < late, "the token still works"
            await asyncio.sleep(0.2)
        error_of(answer, 403, "invalid_token")
    assert time.monotonic() - ended > 0.9
    spectators = await http.get(f"/games/{game_id}/spectator")
    assert spectators.status_code == 200


def create_body(document: dict[str, Any]) -> dict[str, Any]:
    body = document["paths"]["/games"]["post"]["requestBody"]["content"]["application/json"]
    schema: dict[str, Any] = body["schema"]
    return schema


def test_the_openapi_document_states_the_limits(redis_url: str) -> None:
    app = create_app(gateway_settings(redis_url, limits=LIMITS))
    document = app.openapi()
    create = document["paths"]["/games"]["post"]["responses"]
    assert {"413", "429"} <= set(create)
    assert "Retry-After" in create["429"]["headers"]
    assert "429" not in document["paths"]["/healthz"]["get"]["responses"]
    creations = create_body(document)["anyOf"]
    renature = next(body for body in creations if body["title"] == "NewRenatureGame")
    board = renature["properties"]["board"]
    assert board["enum"] == ["base", "valley", "valley-back"]
    name = document["components"]["schemas"]["JoinRequest"]["properties"]["name"]
    assert (name["maxLength"], name["pattern"]) == (40, PLAYER_NAME_PATTERN)
