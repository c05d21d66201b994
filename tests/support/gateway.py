"""A gateway app with the real rules service on one Redis, for the tests that talk HTTP to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from devkit.redis_server import free_port
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits


def gateway_settings(redis_url: str, **changes: Any) -> Settings:
    """The settings of a test's gateway on ``redis_url``: the defaults, but no rate limits and
    no seat tokens lapsing after the end unless a test asks for them (``limits=RateLimits(...)``,
    ``token_ttl_after_end_s=1``), with ``changes`` (parts or fields by name, `Settings.with_`)."""
    quiet = {"limits": RateLimits(enabled=False), "token_ttl_after_end_s": None}
    return Settings.of(redis_url=redis_url, **quiet).with_(**changes)


@contextlib.asynccontextmanager
async def gateway_http(
    redis_url: str,
    consumer: str,
    client: tuple[str, int] = ("127.0.0.1", 123),
    app: FastAPI | None = None,
    **changes: Any,
) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of a gateway (``app``, or one of ``gateway_settings(redis_url, **changes)``
    with a 5 s command timeout) beside a rules service named ``consumer``; requests come from
    ``client``."""
    if app is None:
        app = create_app(gateway_settings(redis_url, **changes), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app, client=client)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer=consumer)),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport, timeout=30) as http,
    ):
        try:
            yield http
        finally:
            if (limiter := getattr(app.state, "limiter", None)) is not None:
                await limiter.aclose()


@contextlib.asynccontextmanager
async def serving(app: FastAPI, **config: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free port (WebSockets need a real server): its host:port.
    ``config`` adds to uvicorn's (its lifespan is off unless asked for)."""
    port = free_port()
    options: dict[str, Any] = {"log_level": "warning", "lifespan": "off", **config}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **options))
    task = asyncio.create_task(server.serve())
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        await asyncio.sleep(0.01)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def started_game(
    http: httpx.AsyncClient, *, players: int = 2, seed: str | None = None
) -> tuple[str, list[str]]:
    """A game created over ``http`` (from ``seed`` where given), every seat taken and started:
    its id and the seats' tokens."""
    body: dict[str, Any] = (
        {"players": players} if seed is None else {"players": players, "seed": seed}
    )
    created = await http.post("/games", json=body)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    tokens = []
    for seat in range(players):
        joined = await http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
        assert joined.status_code == 201, joined.text
        tokens.append(str(joined.json()["token"]))
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    started = await http.post(f"/games/{game_id}/start", headers=auth)
    assert started.status_code == 200, started.text
    return game_id, tokens


async def refused_handshake(url: str) -> tuple[int, str | None, dict[str, Any]]:
    """A WebSocket whose handshake is answered with an HTTP status instead of the upgrade: the
    status, its ``Retry-After`` and its JSON body."""
    with pytest.raises(InvalidStatus) as caught:
        async with connect(url):
            pass
    response = caught.value.response
    body = dict(json.loads(response.body or b"{}"))
    return response.status_code, response.headers.get("Retry-After"), body


async def refused_live(url: str) -> dict[str, Any]:
    """A live connection refused the way the live channel refuses: accepted, one error frame,
    close code 4429. The frame."""
    async with connect(url) as ws:
        message = json.loads(await asyncio.wait_for(ws.recv(), 5))
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 4429
        return dict(message)
