"""Creating a game and joining a seat survive a lost answer.

The gateway, the rules service and a real Redis in this event loop. A retry with the same
``Idempotency-Key`` gets the same game, or the same seat and token; nobody without the key
gets the token; a claim whose join never landed is fenced and released.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameserver.gateway.app import create_app
from gameserver.gateway.idempotency import CLAIM_GRACE_S, SeatClaims, game_id_for
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import bus
from gameserver.runtime.settings import Settings
from renature import commands as c

pytestmark = pytest.mark.redis

KEY = "client-secret-key-0123456789abcdef"


@pytest.fixture
async def http(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(redis_url, command_timeout=5.0, allow_chosen_seeds=True)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings(redis_url=redis_url, consumer="rules-idem")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as client,
    ):
        yield client


def key(name: str) -> dict[str, str]:
    return {"Idempotency-Key": f"{name}-{KEY}"}


async def test_a_retried_creation_answers_the_same_game(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    first = await http.post("/games", json={"players": 2}, headers=key("create"))
    again = await http.post("/games", json={"players": 2}, headers=key("create"))
    assert first.status_code == again.status_code == 201, (first.text, again.text)
    assert first.json() == again.json()
    game_id = first.json()["game_id"]
    assert game_id == game_id_for(f"create-{KEY}")
    assert await RedisEventStore(redis).version(game_id) == 1  # one CreateGame, not two
    other = await http.post("/games", json={"players": 2}, headers=key("another"))
    assert other.json()["game_id"] != game_id


async def test_a_retried_creation_with_a_chosen_seed(http: httpx.AsyncClient) -> None:
    body = {"players": 3, "seed": "chosen-seed"}
    first = await http.post("/games", json=body, headers=key("seeded"))
    again = await http.post("/games", json=body, headers=key("seeded"))
    assert first.status_code == again.status_code == 201, again.text
    assert first.json() == again.json()
    assert first.json()["seed"] == "chosen"


async def test_a_key_reused_for_another_game_is_refused(http: httpx.AsyncClient) -> None:
    assert (await http.post("/games", json={"players": 2}, headers=key("k"))).status_code == 201
    reused = await http.post("/games", json={"players": 4}, headers=key("k"))
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "command_id_reused"


async def test_a_short_key_is_malformed(http: httpx.AsyncClient) -> None:
    response = await http.post("/games", json={"players": 2}, headers={"Idempotency-Key": "x"})
    assert response.status_code == 422


async def test_a_retried_join_gets_the_same_seat_and_token(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
    url = f"/games/{game_id}/seats/0"
    first = await http.post(url, json={"name": "Ada"}, headers=key("join"))
    again = await http.post(url, json={"name": "Ada"}, headers=key("join"))
    assert first.status_code == again.status_code == 201, again.text
    assert first.json() == again.json()
    assert await RedisEventStore(redis).version(game_id) == 2  # one JoinGame
    # Nobody else gets the seat or its token: not without a key, not with another key.
    thief = await http.post(url, json={"name": "Eve"})
    assert thief.status_code == 409
    assert thief.json()["error"]["code"] == "seat_taken"
    thief = await http.post(url, json={"name": "Ada"}, headers=key("guess"))
    assert thief.status_code == 409
    assert "token" not in thief.text
    # The token works.
    token = first.json()["token"]
    seat1 = await http.post(f"/games/{game_id}/seats/1", json={"name": "Bo"})
    assert seat1.status_code == 201
    started = await http.post(
        f"/games/{game_id}/start", headers={"Authorization": f"Bearer {token}"}
    )
    assert started.status_code == 200, started.text


async def test_a_join_whose_answer_was_lost_to_a_timeout(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """The rules service is down: the join times out (504) and its claim is kept. Once the
    service is back, the retry with the same key gets the seat and the token."""
    app = create_app(redis_url, command_timeout=0.5)
    transport = httpx.ASGITransport(app=app)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(app.router.lifespan_context(app))
        http = await stack.enter_async_context(
            httpx.AsyncClient(base_url="http://gateway", transport=transport)
        )
        rules = RulesService(Settings(redis_url=redis_url, consumer="rules-late"))
        async with rules:
            game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
        url = f"/games/{game_id}/seats/1"
        lost = await http.post(url, json={"name": "Ada"}, headers=key("lost"))
        assert lost.status_code == 504
        async with RulesService(Settings(redis_url=redis_url, consumer="rules-back")):
            deadline = time.monotonic() + 10
            while True:
                retry = await http.post(url, json={"name": "Ada"}, headers=key("lost"))
                if retry.status_code != 504 or time.monotonic() > deadline:
                    break
            assert retry.status_code == 201, retry.text
            assert retry.json()["seat"] == 1
            assert await RedisEventStore(redis).version(game_id) == 2


async def test_an_abandoned_claim_is_fenced_and_released(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    """A gateway claimed seat 0 and died before its JoinGame was sent. Once the claim is older
    than the grace period, another player gets the seat; the old join can never land."""
    game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
    store = RedisEventStore(redis)
    claims = SeatClaims(redis, store)
    status, claim = await claims.claim(game_id, 0, "token-of-a-dead-gateway")
    assert status == 1
    young = await http.post(f"/games/{game_id}/seats/0", json={"name": "Bo"})
    assert young.status_code == 409  # too young to be abandoned: its join may be on its way
    old_stamp = int((time.time() - CLAIM_GRACE_S - 1) * 1000)
    _, _, command_id = claim.partition("|")
    claims_key = store.layout.game_scoped_key("claims", game_id)
    await redis.hset(claims_key, "0", f"{old_stamp}|{command_id}")

    taken = await http.post(f"/games/{game_id}/seats/0", json={"name": "Bo"})
    assert taken.status_code == 201, taken.text
    fenced = bus.reply_decoder.decode(await store.get_outcome(game_id, command_id) or b"")
    assert fenced.code == "join_abandoned"
    # The dead gateway's JoinGame arriving late appends nothing.
    handler_store = RedisEventStore(redis)
    before = await handler_store.version(game_id)
    from gameserver.rules.rules_service import CommandHandler, RedisSeedVault

    handler = CommandHandler(store=handler_store, seeds=RedisSeedVault(redis, store.layout))
    late = bus.CommandEnvelope(game_id, command_id, c.JoinGame(0, "Dead"), 0)
    reply = bus.reply_decoder.decode(await handler.handle(late))
    assert reply.status == "rejected"
    assert await handler_store.version(game_id) == before
