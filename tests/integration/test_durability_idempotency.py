"""Creating a game and joining a seat survive a lost answer.

The gateway, the rules service and a real Redis in this event loop. A retry with the same
``Idempotency-Key`` gets the same game, or the same seat and token; nobody without the key
gets the token; a claim whose join never landed is fenced and released.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import cast

import httpx
import pytest
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from devkit.waiting import eventually
from eventstore import KeyLayout, RedisEventStore
from eventstore.redis_client import healing_options
from gameserver.gateway.app import create_app
from gameserver.gateway.idempotency import (
    CLAIM_GRACE_S,
    RedisKeyLeases,
    SeatClaims,
    game_id_for,
    parse_claim,
)
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import bus
from gameserver.runtime.settings import Settings
from renature import commands as c
from support.gateway import gateway_settings
from support.lossy_proxy import LossyProxy

pytestmark = pytest.mark.redis

KEY = "client-secret-key-0123456789abcdef"


@pytest.fixture
async def http(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-idem")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as client,
    ):
        yield client


@asynccontextmanager
async def gateway_alone(redis_url: str, command_timeout: float) -> AsyncIterator[httpx.AsyncClient]:
    """A gateway whose rules service comes and goes as the test says."""
    app = create_app(gateway_settings(redis_url), command_timeout=command_timeout)
    transport = httpx.ASGITransport(app=app)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(app.router.lifespan_context(app))
        yield await stack.enter_async_context(
            httpx.AsyncClient(base_url="http://gateway", transport=transport)
        )


def key(name: str) -> dict[str, str]:
    return {"Idempotency-Key": f"{name}-{KEY}"}


async def created(http: httpx.AsyncClient) -> str:
    """A new game's id, through a gateway whose command timeout is short: the creation is sent
    again with its key until it is answered (a rules service just started may take longer than
    the timeout over its first command on a busy machine; the key makes it one game)."""
    answers: list[httpx.Response] = []

    async def answered() -> bool:
        answers.append(await http.post("/games", json={"players": 2}, headers=key("create")))
        return answers[-1].status_code == 201

    await eventually(answered, "the game created", timeout=15, interval=0.1)
    game_id: str = answers[-1].json()["game_id"]
    return game_id


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
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"


async def test_a_creation_retried_with_another_seating_changes_nothing(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    """The failure this guards against: the retry with ``seating: open`` rewrote an invitation
    game's lobby to open while its invitation stayed required."""
    body = {"players": 2, "seating": "invite"}
    first = await http.post("/games", json=body, headers=key("seating"))
    assert first.status_code == 201, first.text
    game_id, code = first.json()["game_id"], first.json()["invite_code"]
    lobby = RedisEventStore(redis).layout.game_scoped_key("lobby", game_id)
    before = await redis.hgetall(lobby)
    other = await http.post("/games", json={**body, "seating": "open"}, headers=key("seating"))
    assert other.status_code == 422, other.text
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert "host_token" not in other.text
    assert code not in other.text
    assert await redis.hgetall(lobby) == before
    assert (await http.get(f"/games/{game_id}")).json()["seating"] == "invite"
    uninvited = await http.post(f"/games/{game_id}/seats/0", json={"name": "Eve"})
    assert uninvited.status_code == 403
    again = await http.post("/games", json=body, headers=key("seating"))
    assert again.status_code == 201
    assert again.json() == first.json()


async def test_a_refused_keyed_creation_keeps_no_fingerprint(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    """A creation the rules refuse leaves nothing under its key but the refusal."""
    body = {"players": 2, "board": "no-such-board"}
    refused = await http.post("/games", json=body, headers=key("refused"))
    assert 400 <= refused.status_code < 500, refused.text
    game_id = game_id_for(f"refused-{KEY}")
    assert await redis.exists(RedisEventStore(redis).layout.game_scoped_key("lobby", game_id)) == 0


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
    async with gateway_alone(redis_url, command_timeout=0.5) as http:
        rules = RulesService(Settings.of(redis_url=redis_url, consumer="rules-late"))
        async with rules:
            game_id = await created(http)
        url = f"/games/{game_id}/seats/1"
        lost = await http.post(url, json={"name": "Ada"}, headers=key("lost"))
        assert lost.status_code == 504
        async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-back")):
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
    _, command_id, _ = parse_claim(claim)
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


async def test_a_join_queued_behind_an_outage_is_not_fenced(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """The rules service is down: Ada's keyed join times out (504) and waits on the command
    stream. Her claim grows older than the grace period and Bo asks for the seat: the
    withdrawal of her join queues behind it (Bo gets 504), so once the service is back her join
    lands first, the withdrawal finds it accepted, Bo is refused and Ada's retry gets the seat."""
    async with gateway_alone(redis_url, command_timeout=0.5) as http:
        async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-early")):
            game_id = await created(http)
        url = f"/games/{game_id}/seats/0"
        lost = await http.post(url, json={"name": "Ada"}, headers=key("ada"))
        assert lost.status_code == 504
        claims_key = RedisEventStore(redis).layout.game_scoped_key("claims", game_id)
        _, command_id, request = parse_claim(
            cast(bytes, await redis.hget(claims_key, "0") or b"").decode()
        )
        old_stamp = int((time.time() - CLAIM_GRACE_S - 1) * 1000)
        await redis.hset(claims_key, "0", f"{old_stamp}|{command_id}|{request}")
        bo = await http.post(url, json={"name": "Bo"})
        assert bo.status_code == 504, bo.text  # the withdrawal waits for the rules service
        async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-back")):
            answers: list[httpx.Response] = []

            async def ada_seated() -> bool:
                answers.append(await http.post(url, json={"name": "Ada"}, headers=key("ada")))
                return answers[-1].status_code == 201

            await eventually(ada_seated, "Ada's retry seated", timeout=15, interval=0.2)
            assert answers[-1].json()["seat"] == 0
            bo = await http.post(url, json={"name": "Bo"})
            assert (bo.status_code, bo.json()["error"]["code"]) == (409, "seat_taken")
        outcome = await RedisEventStore(redis).get_outcome(game_id, command_id)
        assert bus.reply_decoder.decode(outcome or b"").status == "accepted"


async def test_a_join_retried_with_another_body_keeps_its_seat(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    """The failure this guards against, step by step: the retry with another name was refused
    409 and released the seat its first try had taken; the game then waited for seat 0 for
    ever."""
    game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
    url = f"/games/{game_id}/seats/0"
    seats = RedisEventStore(redis).layout.seats_key(game_id)
    first = await http.post(url, json={"name": "ann"}, headers=key("ann"))
    assert first.status_code == 201, first.text
    bearer = {"Authorization": f"Bearer {first.json()['token']}"}
    assert (await http.get(f"/games/{game_id}/view", headers=bearer)).status_code == 200
    before = await redis.hgetall(seats)
    version = await RedisEventStore(redis).version(game_id)

    other = await http.post(url, json={"name": "ann2"}, headers=key("ann"))
    assert other.status_code == 422, other.text
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert "token" not in other.json()
    assert await redis.hgetall(seats) == before  # the seat is still ann's
    assert await RedisEventStore(redis).version(game_id) == version
    assert (await http.get(f"/games/{game_id}/view", headers=bearer)).status_code == 200
    again = await http.post(url, json={"name": "ann"}, headers=key("ann"))
    assert again.status_code == 201
    assert again.json() == first.json()
    thief = await http.post(url, json={"name": "eve"}, headers=key("eve"))
    assert thief.status_code == 409
    assert thief.json()["error"]["code"] == "seat_taken"

    bo = await http.post(f"/games/{game_id}/seats/1", json={"name": "bo"})
    started = await http.post(
        f"/games/{game_id}/start", headers={"Authorization": f"Bearer {bo.json()['token']}"}
    )
    assert started.status_code == 200, started.text
    legal = await http.get(f"/games/{game_id}/legal-actions", headers=bearer)
    assert legal.status_code == 200, legal.text
    summary = (await http.get(f"/games/{game_id}")).json()
    assert summary["seats_joined"] == [0, 1]
    assert summary["phase"] != "lobby"


async def test_a_keyed_retry_while_the_first_is_answered_is_409(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """No rules service: the first keyed join waits for its answer; a retry meanwhile gets 409
    ``idempotency_key_in_flight`` and changes nothing; once the first is answered (504) and
    the rules service is up, the retry gets the seat."""
    async with gateway_alone(redis_url, command_timeout=1.5) as http:
        async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-first")):
            game_id = await created(http)
        url = f"/games/{game_id}/seats/0"
        first = asyncio.create_task(http.post(url, json={"name": "Ada"}, headers=key("fly")))
        leases = RedisEventStore(redis).layout.game_scoped_key("inflight:*", game_id)
        await eventually(lambda: _exists(redis, leases), "the first join's lease")
        during = await http.post(url, json={"name": "Ada"}, headers=key("fly"))
        assert during.status_code == 409, during.text
        assert during.json()["error"]["code"] == "idempotency_key_in_flight"
        assert (await first).status_code == 504
        assert not await _exists(redis, leases)  # released by the request that held it
        async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-again")):
            retry = await http.post(url, json={"name": "Ada"}, headers=key("fly"))
            assert retry.status_code == 201, retry.text


async def test_a_lease_whose_answer_was_lost_is_still_its_own_requests(
    redis: aioredis.Redis, redis_url: str
) -> None:
    """The connection fails after the lease was taken and before the answer came: the client
    (with the gateway's retries) sends the command again, and the request still holds its
    lease, instead of being told that a request with its key is in flight (itself), which
    left the key blocked until the lease lapsed (the cluster bench's set-up failed so). The
    proxy shows a plain ``SET NX`` resent that way finds the key taken."""
    where = redis.connection_pool.connection_kwargs
    async with LossyProxy(where["host"], where["port"]) as proxy:
        client = aioredis.Redis(host="127.0.0.1", port=proxy.port, **healing_options())
        await client.ping()  # a connection open: the next answer is the lease's
        leases = RedisKeyLeases(client, KeyLayout(), command_timeout=5)
        lease = KeyLayout().game_scoped_key("inflight:create", "g-lost")
        proxy.lose_next_answer = True
        async with leases.hold("g-lost", "create"):
            assert proxy.lost == 1
            assert await redis.exists(lease)
        assert not await redis.exists(lease)  # released by the request that held it

        proxy.lose_next_answer = True
        assert await client.set("plain-nx", "mine", nx=True, px=5_000) is None  # "taken"
        assert proxy.lost == 2
        assert await redis.get("plain-nx") == b"mine"
        await client.aclose()


async def test_a_lease_is_taken_and_released_after_redis_lost_its_scripts(
    redis: aioredis.Redis,
) -> None:
    """The leases' scripts go by their digests: a Redis that lost them (restarted, ``SCRIPT
    FLUSH``) is sent them again, and the lease is held and released as before."""
    leases = RedisKeyLeases(redis, KeyLayout(), command_timeout=5)
    lease = KeyLayout().game_scoped_key("inflight:join-1", "g-flushed")
    for _ in range(2):
        await redis.script_flush()
        async with leases.hold("g-flushed", "join-1"):
            assert await redis.exists(lease)
            with pytest.raises(Refusal) as refused:  # another request with the key: 409
                async with RedisKeyLeases(redis, KeyLayout(), command_timeout=5).hold(
                    "g-flushed", "join-1"
                ):
                    pass
            assert refused.value.code == "idempotency_key_in_flight"
            await redis.script_flush()  # lost under the request: released all the same
        assert not await redis.exists(lease)


async def _exists(redis: aioredis.Redis, pattern: str) -> bool:
    return bool([name async for name in redis.scan_iter(match=pattern)])


async def test_a_replayed_join_is_logged_as_a_replay(
    http: httpx.AsyncClient, redis: aioredis.Redis
) -> None:
    """The failure this guards against: the retry got its stored 201 while the rules service logged
    ``command_rejected JoinGame invalid_command``."""
    game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
    url = f"/games/{game_id}/seats/1"
    assert (await http.post(url, json={"name": "Ada"}, headers=key("log"))).status_code == 201
    with capture_logs() as logs:
        again = await http.post(url, json={"name": "Ada"}, headers=key("log"))
    assert again.status_code == 201, again.text
    events = [entry for entry in logs if entry.get("command") == "JoinGame"]
    assert not [entry for entry in events if entry["event"] == "command_rejected"], events
    assert any(
        entry["event"] in ("command_replayed", "command_duplicate")
        and entry.get("status", "accepted") == "accepted"
        for entry in events
    ), logs
