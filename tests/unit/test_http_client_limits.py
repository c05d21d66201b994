"""The typed gateway client waits out rate limits (429 with Retry-After) instead of failing a
bot's game; it gives up after a few tries and then reports the 429 as any other error."""

from __future__ import annotations

import time

import httpx
import pytest

from gameserver.cli.gateway_client import GatewayClient, GatewayError


def limited_then_open(
    refusals: int, retry_after: str = "0.1"
) -> tuple[httpx.MockTransport, list[float]]:
    seen: list[float] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(time.monotonic())
        if len(seen) <= refusals:
            body = {"error": {"code": "rate_limited", "message": "slow down"}}
            return httpx.Response(429, json=body, headers={"Retry-After": retry_after})
        return httpx.Response(200, json={"game_id": "g", "phase": "lobby"})

    return httpx.MockTransport(answer), seen


async def test_a_429_is_waited_out_and_the_request_sent_again() -> None:
    transport, seen = limited_then_open(2)
    async with GatewayClient("http://gateway", transport=transport) as client:
        summary = await client.summary("g")
    assert summary["phase"] == "lobby"
    assert len(seen) == 3
    assert seen[1] - seen[0] >= 0.09  # Retry-After was honoured
    assert seen[2] - seen[1] >= 0.09


async def test_a_limit_that_never_lifts_is_reported() -> None:
    transport, seen = limited_then_open(100, retry_after="0")
    async with GatewayClient("http://gateway", transport=transport) as client:
        with pytest.raises(GatewayError) as error:
            await client.summary("g")
    assert error.value.status == 429
    assert error.value.code == "rate_limited"
    assert len(seen) == 6
