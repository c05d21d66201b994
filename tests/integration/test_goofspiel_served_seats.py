"""Goofspiel's seats and clocks through the services (docs/rules-goofspiel.md, rulings 9 to 12),
on a real Redis with the real rules service, the gateway in process and the real clock
service: a seat that never bids is bid for by the rules once the clock service claims its
timeout (``bot``) or loses (``remove``); the lobby's cancel, leave, remove and resign routes;
a seat taken back from the bot; the catalog offers its clock; retention packs a cancelled
game."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from eventstore import KeyLayout, RedisEventStore
from gameserver.gateway.app import create_app
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy
from support.clock import clock_service
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis

GAME = "goofspiel"


@dataclass
class Stack:
    http: httpx.AsyncClient
    redis: aioredis.Redis
    store: RedisEventStore


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-goofspiel-seats")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(http, redis, RedisEventStore(redis))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text


async def created(stack: Stack, **body: Any) -> tuple[str, str]:
    """A new Goofspiel game: its id and host token."""
    response = await stack.http.post("/games", json={"game": GAME, **body})
    assert response.status_code == 201, response.text
    return response.json()["game_id"], response.json()["host_token"]


async def seated(stack: Stack, game_id: str, seat: int) -> str:
    response = await stack.http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


async def started(stack: Stack, **body: Any) -> tuple[str, list[str]]:
    game_id, host = await created(stack, **body)
    tokens = [await seated(stack, game_id, seat) for seat in (0, 1)]
    response = await stack.http.post(f"/games/{game_id}/start", headers=bearer(host))
    assert response.status_code == 200, response.text
    return game_id, tokens


async def summary(stack: Stack, game_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = (await stack.http.get(f"/games/{game_id}")).json()
    return answer


async def bid_while_waited_for(
    stack: Stack, game_id: str, seat: int, token: str, timeout: float
) -> dict[str, Any]:
    """``seat`` bids its highest card whenever the game waits for it, until the game ends."""
    deadline = time.monotonic() + timeout
    while (now := await summary(stack, game_id))["phase"] != "finished":
        assert time.monotonic() < deadline, now
        view = (await stack.http.get(f"/games/{game_id}/view", headers=bearer(token))).json()
        if view["current_seat"] == seat and view["phase"] == "bidding":
            card = max(view["seats"][seat]["cards"])
            command = {"type": "Bid", "card": card}
            body = {"command_id": f"bid-{view['version']}", "command": command}
            await stack.http.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
        await asyncio.sleep(0.05)
    return now


async def test_a_seat_that_never_bids_is_bid_for_by_the_rules_to_the_end(stack: Stack) -> None:
    control = {"per_turn": 1, "on_timeout": "bot"}
    game_id, tokens = await started(stack, cards=4, time_control=control)
    assert (await summary(stack, game_id))["clock"]["running_for"] == 0
    async with clock_service(stack.redis, "clock-goofspiel") as service:
        final = await bid_while_waited_for(stack, game_id, 1, tokens[1], 30)
    assert service.claims >= 1
    assert final["seats"][0]["status"] == "bot"
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    timeouts = [ev for ev in events if ev["type"] == "SeatTimedOut"]
    assert timeouts[0]["seat"] == 0
    assert timeouts[0]["on_timeout"] == "bot"
    bids = [ev for ev in events if ev["type"] == "BidsRevealed"]
    assert [ev["bids"][0] for ev in bids] == [1, 2, 3, 4]  # the lowest card, each turn
    assert events[-1]["type"] == "GameEnded"
    report = (await stack.http.get(f"/games/{game_id}/audit")).json()
    assert report["ok"], report["first_bad"]  # every claim re-decided from its recorded time


async def test_a_seat_whose_time_runs_out_loses_with_remove(stack: Stack) -> None:
    control = {"per_turn": 1, "on_timeout": "remove"}
    game_id, _ = await started(stack, time_control=control)
    began = time.monotonic()
    async with clock_service(stack.redis, "clock-goofspiel") as service:
        deadline = time.monotonic() + 15
        while (final := await summary(stack, game_id))["phase"] != "finished":
            assert time.monotonic() < deadline, final
            await asyncio.sleep(0.1)
    assert time.monotonic() - began >= 0.5  # not before the deadline
    assert service.claims >= 1
    assert [seat["status"] for seat in final["seats"]] == ["removed", "playing"]
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    assert [ev["type"] for ev in events[-2:]] == ["SeatTimedOut", "GameEnded"]
    assert events[-1]["winners"] == [1]
    report = (await stack.http.get(f"/games/{game_id}/audit")).json()
    assert report["ok"], report["first_bad"]
    assert await stack.redis.zscore(service.deadlines_key, game_id) is None


async def test_a_seat_taken_back_from_the_bot_bids_for_itself_again(stack: Stack) -> None:
    game_id, tokens = await started(stack, time_control={"per_turn": 1, "on_timeout": "bot"})
    async with clock_service(stack.redis, "clock-goofspiel"):
        deadline = time.monotonic() + 15
        while (now := await summary(stack, game_id))["seats"][0]["status"] != "bot":
            assert time.monotonic() < deadline, now
            await asyncio.sleep(0.1)
    url = f"/games/{game_id}/commands"
    # The seat's own next command takes it back first (the gateway sends ReclaimSeat before
    # it); the bid itself is refused: the bot's bid for this prize stands.
    own = {"command_id": "own-bid", "command": {"type": "Bid", "card": 13}}
    refused(await stack.http.post(url, json=own, headers=bearer(tokens[0])), 409, "already_bid")
    assert (await summary(stack, game_id))["seats"][0]["status"] == "playing"
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    assert [event["type"] for event in events].count("SeatReclaimed") == 1
    back = {"command_id": "back", "command": {"type": "ReclaimSeat"}}
    again = await stack.http.post(url, json=back, headers=bearer(tokens[0]))
    refused(again, 409, "not_played_by_bot")


async def test_the_lobby_routes_cancel_leave_remove_and_resign_a_goofspiel_game(
    stack: Stack,
) -> None:
    game_id, host = await created(stack)
    tokens = [await seated(stack, game_id, seat) for seat in (0, 1)]
    seats = f"/games/{game_id}/seats"
    assert (await stack.http.delete(f"{seats}/1", headers=bearer(tokens[1]))).status_code == 200
    assert (await stack.http.delete(f"{seats}/0", headers=bearer(host))).status_code == 200
    assert (await summary(stack, game_id))["open_seats"] == [0, 1]
    events = (await stack.http.get(f"/games/{game_id}/events", params={"after": 3})).json()
    assert [(ev["type"], ev["reason"]) for ev in events] == [
        ("PlayerLeft", "left"),
        ("PlayerLeft", "removed"),
    ]
    cancel = f"/games/{game_id}/cancel"
    assert (await stack.http.post(cancel, headers=bearer(host))).status_code == 200
    assert (await summary(stack, game_id))["phase"] == "cancelled"
    refused(await stack.http.post(cancel, headers=bearer(host)), 409, "game_over")

    game_id, tokens = await started(stack)
    refused(
        await stack.http.post(f"/games/{game_id}/cancel", headers=bearer(host)), 403, "not_host"
    )
    refused(
        await stack.http.delete(f"/games/{game_id}/seats/0", headers=bearer(tokens[0])),
        409,
        "wrong_phase",
    )
    resign = await stack.http.post(f"/games/{game_id}/resign", headers=bearer(tokens[0]))
    assert resign.status_code == 200, resign.text
    deadline = time.monotonic() + 10
    while (final := await summary(stack, game_id))["phase"] != "finished":  # the seed revealed
        assert time.monotonic() < deadline, final
        await asyncio.sleep(0.05)
    assert [seat["status"] for seat in final["seats"]] == ["resigned", "playing"]
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    assert events[-1]["winners"] == [1]


async def test_the_catalog_offers_goofspiels_clock(stack: Stack) -> None:
    entry = next(
        entry for entry in (await stack.http.get("/games/catalog")).json() if entry["name"] == GAME
    )
    assert entry["clock"] is True
    assert entry["timeouts"] == ["bot", "remove"]
    assert "cancelled" in entry["phases"]
    bad = {"game": GAME, "time_control": {"per_turn": 30, "total": 60}}
    refused(await stack.http.post("/games", json=bad), 422, "malformed_request")


async def test_a_cancelled_goofspiel_game_is_packed_by_retention(stack: Stack) -> None:
    game_id, host = await created(stack)
    assert (
        await stack.http.post(f"/games/{game_id}/cancel", headers=bearer(host))
    ).status_code == 200
    before = await stack.store.read(game_id)

    policy = RetentionPolicy().with_(finished_grace_s=900)
    later = lambda: time.time() + 901  # noqa: E731
    janitor = Retention(
        stack.redis, KeyLayout(), policy, consumer="janitor-gs", clock=later, stage_of=stage_of
    )
    assert (await janitor.run_once()).games_packed == 1
    assert await stack.store.read(game_id) == before
