"""A gateway app with the real rules service on one Redis, for the tests that talk HTTP to it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings


@contextlib.asynccontextmanager
async def gateway_http(
    redis_url: str, consumer: str, client: tuple[str, int] = ("127.0.0.1", 123), **options: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of a gateway (``create_app(redis_url, **options)``, a 5 s command
    timeout unless given) beside a rules service named ``consumer``; requests come from
    ``client``."""
    app = create_app(redis_url, **{"command_timeout": 5.0, **options})
    transport = httpx.ASGITransport(app=app, client=client)
    async with (
        RulesService(Settings(redis_url=redis_url, consumer=consumer)),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport, timeout=30) as http,
    ):
        try:
            yield http
        finally:
            if (limiter := getattr(app.state, "limiter", None)) is not None:
                await limiter.aclose()
