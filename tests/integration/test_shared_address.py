"""Limits that fit people: ten people behind one address (a household, a
classroom behind one NAT) play five whole games at once under the gateway's default limits,
and none of their requests meets a 429, while tests/integration/test_limits.py shows that the
floods from one address stay refused."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis

from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis

HOUSEHOLD = ("192.0.2.7", 50000)  # everyone's requests come from this one address


THINK_S = 0.2
"""A person's quickest decision: bots answer at once, people take a moment per move."""


class Person(httpx.AsyncBaseTransport):
    """A bot's requests as a person's browser sends them: a moment to think before each move,
    and after it the page refreshed (the seat's view and the table, with the seat's token, as
    the web client sends them). Counts every status the gateway answered, before any client
    waits out a 429."""

    def __init__(self, inner: httpx.AsyncBaseTransport, statuses: Counter[int]) -> None:
        self._inner = inner
        self._statuses = statuses

    async def _send(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        self._statuses[response.status_code] += 1
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        move = request.method == "POST" and request.url.path.endswith("/commands")
        if move:
            await asyncio.sleep(THINK_S)  # a load model (a person's pace), not a wait
        response = await self._send(request)
        if move:
            game = request.url.path.removesuffix("/commands")
            headers = {"Authorization": request.headers["Authorization"]}
            for page in ("/view", "/table"):
                refresh = httpx.Request(
                    "GET", request.url.copy_with(path=game + page), headers=headers
                )
                await (await self._send(refresh)).aread()
        return response


@pytest.fixture
async def app(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[httpx.AsyncBaseTransport]:
    gateway = create_app(
        gateway_settings(redis_url, allow_chosen_seeds=True, limits=RateLimits()),
        command_timeout=10.0,
    )
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-household")),
        gateway.router.lifespan_context(gateway),
    ):
        try:
            yield httpx.ASGITransport(app=gateway, client=HOUSEHOLD)
        finally:
            await gateway.state.limiter.aclose()


async def test_ten_people_on_one_address_never_meet_a_429(
    app: httpx.AsyncBaseTransport,
) -> None:
    statuses: Counter[int] = Counter()

    async def one_game(number: int) -> int:
        async with GatewayClient("http://gateway", transport=Person(app, statuses)) as client:
            outcome = await play_game(client, 2, f"household-{number}", ["greedy", "random"])
            return int(outcome.events)

    event_counts = await asyncio.gather(*(one_game(n) for n in range(5)))
    assert all(
        events > 20 for events in event_counts
    )  # five whole games, each to its end (play_game
    # waits for the final state)
    assert statuses[429] == 0, statuses
    assert statuses[200] + statuses[201] == sum(statuses.values()), statuses
